//! The game decoder's moves and the tracker's events, made one account for the rule engine.
//!
//! The decoder says which move was made; the tracker says how (which hand lifted, touched,
//! released what, and when). The tracker's events up to the time a decoded move went out are
//! tried on a copy of the engine: if they make that move, they stand, with every ruling they
//! give. If they do not (a misread the tracker followed, a still a move with no hand in view),
//! the move's own events stand instead (lift, removal, release, as the move needs them, at the
//! times the board showed it begun and done, by the hand the tracker saw there if any), after
//! the tracker's touches dated before the move began where the engine holds the board the move
//! was made on (they happened on it), and the tracker is told to start again from the decoded
//! board. So the game is the decoder's, and the
//! Article 4 events are read against it.

use std::collections::VecDeque;

use shakmaty::{Move, Position, Square};

use crate::events::{Action, Event, Hand};
use crate::read::DecodedMove;
use crate::rules::{Engine, Record};

/// The `hand_conf` of a move's own events where the tracker saw no hand of the mover's: which
/// hand it was is not known, so no ruling on hands (4.1) rests on it.
const UNSEEN_HAND_CONF: f32 = 0.5;

/// The `conf` of a move's own events at most (the decoder's own confidence where it is lower):
/// the board shows the move, the moment of each event is the decoder's.
const MOVE_CONF: f32 = 0.9;

/// The `conf` of an illegal move's own events where the decoder is not sure of it, under the
/// engine's default `--min-conf`: an illegal move the board alone shows, no hand seen making
/// it, is the arbiter's to judge (a piece out of sight and another read in the wrong colour can
/// look like one).
const UNSEEN_ILLEGAL_CONF: f32 = 0.5;

/// The decoder's confidence in an illegal move from which the board alone makes it an
/// `illegal` ruling, not a `judgement`: the best history without it 9.2 nats behind (10,000
/// times less likely). A move final in the decoder's beam (every hypothesis alive holds it) is
/// at least 30 nats ahead of any other reading. Only a move that moves its piece as its kind
/// moves is sure so (a move made in check, a pinned piece moved): a piece moved as another
/// moves is illegal only as far as its type is read right, the board model's weakest reading
/// (a king's top and a queen's), and once a history has misread a type every later move of
/// that piece looks like one; the arbiter judges it (see [`sure_illegal`]).
const SURE_ILLEGAL: f32 = 0.9999;

/// Seconds a decoded move waits for the tracker's events up to it before it stands on its own.
const WAIT_S: f64 = 2.0;

/// Seconds a decoded move waits for the tracker, once the tracker has seen it begun, to see it
/// made: a promotion's exchange can take that long.
const UNDER_WAY_S: f64 = 8.0;

/// What a reconciliation did.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The events the engine took, as it took them.
    pub events: Vec<Event>,
    /// The tracker's events did not make a move: it must start again from the board.
    pub resync: bool,
}

/// The engine, fed the tracker's events once the decoder has said which move they make.
pub struct Reconciler {
    engine: Engine,
    events: VecDeque<Event>,
    moves: VecDeque<(DecodedMove, f64)>,
    /// Events dated before this were settled.
    settled: f64,
    /// The engine before each decoded move it took in, in order: where the decoder takes moves
    /// back (live), the engine goes back to before the first of them.
    before: Vec<Engine>,
}

impl Reconciler {
    /// A reconciler for `engine`, with the spoken `declarations` ("j'adoube", from another
    /// channel) to merge in by time.
    pub fn new(engine: Engine, declarations: Vec<Event>) -> Reconciler {
        let mut r = Reconciler { engine, events: VecDeque::new(), moves: VecDeque::new(), settled: f64::NEG_INFINITY, before: Vec::new() };
        for d in declarations {
            r.insert(d);
        }
        r
    }

    /// The engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The moves the board shows made and the PGN does not hold yet: the engine's standing
    /// move, then the decoder's moves the engine has not taken in (their events wait for the
    /// tracker), as far as each follows the one before.
    pub fn standing(&self) -> Vec<Move> {
        let mut pos = self.engine.position().clone();
        let mut out = Vec::new();
        if let Some(m) = self.engine.standing() {
            pos.play_unchecked(m);
            out.push(m);
        }
        for (m, _) in &self.moves {
            if m.illegal || m.before != pos {
                break;
            }
            pos = m.after();
            out.push(m.mv);
        }
        out
    }

    /// The engine, to finish it.
    pub fn engine_mut(&mut self) -> &mut Engine {
        &mut self.engine
    }

    /// Queues `ev` in time order.
    fn insert(&mut self, ev: Event) {
        let at = self.events.partition_point(|e| e.t <= ev.t);
        self.events.insert(at, ev);
    }

    /// Takes in the tracker's `events` and the decoder's `moves`, decided at `now`; settles what
    /// it can, given that the tracker has given out every event before `flushed`.
    pub fn push(&mut self, events: Vec<Event>, moves: Vec<DecodedMove>, now: f64, flushed: f64, records: &mut Vec<Record>) -> Outcome {
        for ev in events {
            if ev.t < self.settled {
                tracing::debug!("the tracker's {} at {:.2}s came after its move was settled: dropped", ev.action.name(), ev.t);
                continue;
            }
            self.insert(ev);
        }
        self.moves.extend(moves.into_iter().map(|m| (m, now)));
        let mut outcome = Outcome::default();
        while let Some((m, decided)) = self.moves.front() {
            if flushed < *decided && now - decided < WAIT_S {
                break;
            }
            // The tracker sees the move under way but not made: a pawn set on the last rank
            // before it is exchanged, a castling rook still to come. Its events may yet make it.
            let alone = self.moves.len() == 1;
            if alone && now - decided < UNDER_WAY_S && now.is_finite() && self.under_way(m, flushed) {
                break;
            }
            let (m, decided) = self.moves.pop_front().expect("a move waits");
            self.settle(&m, m.t.max(decided).max(flushed.min(now)), records, &mut outcome);
        }
        outcome
    }

    /// Whether the tracker's events up to `flushed` leave `m` begun and not made: the game not
    /// moved on, the pieces differing from before the move only on its squares, some of them.
    fn under_way(&self, m: &DecodedMove, flushed: f64) -> bool {
        let mut trial = self.engine.clone();
        for ev in self.events.iter().filter(|e| e.t <= flushed) {
            trial.apply(ev, &mut Vec::new());
        }
        let squares = crate::rules::differing(m.before.board(), m.after().board());
        let moved = crate::rules::differing(m.before.board(), trial.board());
        trial.position() == &m.before && trial.standing() != Some(m.mv) && moved.any() && (moved & !squares).is_empty()
    }

    /// The decoder took back the moves it put out from its `from`-th on (`replaced`) and reads
    /// `by` in their place, at `t`. Moves the engine took in go back out of it, with a
    /// [`Record::Correction`] that names them and their replacements; moves still waiting are
    /// dropped. Returns whether the engine went back (the tracker must start again).
    pub fn replace(&mut self, t: f64, from: usize, replaced: &[DecodedMove], by: Vec<DecodedMove>, records: &mut Vec<Record>) -> bool {
        let taken = self.before.len();
        let back = from < taken;
        if back {
            self.engine = self.before[from].clone();
            self.before.truncate(from);
            self.moves.clear();
            self.events.clear();
            self.settled = t;
            let sans = |ms: &[DecodedMove]| ms.iter().map(|m| shakmaty::san::San::from_move(&m.before, m.mv).to_string()).collect::<Vec<_>>();
            let (replaced, by_san) = (sans(&replaced[..(taken - from).min(replaced.len())]), sans(&by));
            let text = format!(
                "the board now reads {} where {} was recorded",
                if by_san.is_empty() { "no move".to_string() } else { by_san.join(" ") },
                replaced.join(" ")
            );
            records.push(Record::Correction(crate::rules::Correction { t, ply: self.engine.ply() + 1, replaced, by: by_san, text }));
        } else {
            self.moves.truncate(from - taken);
        }
        self.moves.extend(by.into_iter().map(|m| (m, t)));
        back
    }

    /// Ends the input: the moves left, then the events left, go to the engine.
    pub fn finish(&mut self, events: Vec<Event>, moves: Vec<DecodedMove>, records: &mut Vec<Record>) -> Outcome {
        let mut outcome = self.push(events, moves, f64::INFINITY, f64::INFINITY, records);
        for ev in std::mem::take(&mut self.events) {
            outcome.events.push(self.engine.apply(&ev, records));
        }
        outcome
    }

    /// Settles move `m` with the events up to `cut`: the tracker's, up to the last after which
    /// the engine stands at `m` made (the opponent's touch that completes it, and what follows,
    /// wait for the next move); or, if none leaves it there, the move's own.
    fn settle(&mut self, m: &DecodedMove, cut: f64, records: &mut Vec<Record>, outcome: &mut Outcome) {
        self.before.push(self.engine.clone());
        tracing::debug!("settling {} (began {:.2}s, done {:.2}s) with the events up to {cut:.2}s", crate::rules::record::uci(m.mv), m.began, m.t);
        let window: Vec<Event> = self.events.iter().filter(|e| e.t <= cut).copied().collect();
        let after = m.after();
        let squares = crate::rules::differing(m.before.board(), after.board());
        // Made: a legal move standing, or the pieces where an illegal one put them.
        let made = |engine: &Engine| engine.position() == &m.before && if m.illegal { engine.board() == after.board() } else { engine.standing() == Some(m.mv) };
        let mut trial = self.engine.clone();
        let mut last_made = None;
        for (i, ev) in window.iter().enumerate() {
            trial.apply(ev, &mut Vec::new());
            if made(&trial) {
                last_made = Some(i);
            }
        }
        if let Some(last) = last_made {
            for ev in &window[..=last] {
                outcome.events.push(self.engine.apply(&vouched(m, &in_time(m, squares, ev)), records));
            }
            self.settled = window[last].t;
            self.events.drain(..=last);
            return;
        }
        tracing::debug!(
            "the tracker's events up to {cut:.2}s ({}) do not make {}: the move's own events stand",
            window.iter().map(|e| format!("{} {} {:.2}", e.hand, e.action.name(), e.t) + &e.action.square().map_or(String::new(), |s| format!(" {s}"))).collect::<Vec<_>>().join(", "),
            crate::rules::record::uci(m.mv)
        );
        let hand = window.iter().map(|e| e.hand).find(|h| h.side == m.before.turn());
        // Where the engine stands elsewhere than the decoder (it followed events the decoder
        // read otherwise), the move's own events say what the board showed, not what breach it
        // makes in the engine's position: nothing ruled on them is sure enough to accuse.
        let synced = stands_at(&self.engine, &m.before);
        if synced {
            // The board before the move is the one the engine holds: what the tracker's hands
            // did to its pieces before the move began (touched, brushed, adjusted) happened on
            // it, whether the tracker later lost the move or only had not given it out yet.
            for ev in window.iter().filter(|e| e.t < m.began && matches!(e.action, Action::Touch(_) | Action::Brush(_) | Action::Adjust)) {
                self.settled = self.settled.max(ev.t);
                outcome.events.push(self.engine.apply(ev, records));
            }
        }
        for mut ev in own_events(m, hand, self.settled) {
            if !synced {
                ev.conf = ev.conf.map(|c| c.min(UNSEEN_ILLEGAL_CONF));
            }
            self.settled = self.settled.max(ev.t);
            outcome.events.push(self.engine.apply(&ev, records));
        }
        // What the tracker dated up to the move's own last event is of a board it misread.
        let settled = self.settled;
        self.events.retain(|e| e.t > settled);
        outcome.resync = true;
    }
}

/// Whether the decoder is sure enough of `m`, an illegal move, for the board alone to make it
/// an `illegal` ruling ([`SURE_ILLEGAL`]).
fn sure_illegal(m: &DecodedMove) -> bool {
    m.illegal && m.conf >= SURE_ILLEGAL && m.as_its_kind()
}

/// Whether `engine` stands at `pos`: the moves to it completed, or the last of them made and
/// standing on the board, to be completed by the mover's first event.
fn stands_at(engine: &Engine, pos: &shakmaty::Chess) -> bool {
    engine.position() == pos
        || engine.standing().is_some_and(|m| {
            let mut after = engine.position().clone();
            after.play_unchecked(m);
            &after == pos
        })
}

/// `ev`, a tracker's event that goes to make move `m`, with the decoder's word for it: where
/// the decoder is sure of an illegal move ([`SURE_ILLEGAL`]), the tracker's doubt that its piece
/// was set down where it stands (a release soon after the lift, as a photo a move or a fast
/// hand shows it) is answered by every reading since, and the set-down counts as the move's
/// own events do ([`MOVE_CONF`]).
fn vouched(m: &DecodedMove, ev: &Event) -> Event {
    let set_down = matches!(ev.action, Action::Release(sq) | Action::Place { sq, .. } if sq == m.mv.to());
    match ev.conf {
        Some(c) if sure_illegal(m) && set_down => Event { conf: Some(c.max(MOVE_CONF)), ..*ev },
        _ => *ev,
    }
}

/// `ev`, a tracker's event that goes to make move `m` (which changes `squares`), dated no later
/// than the board showed the move done with no hand over it: the piece had been let go then. The tracker, which sees
/// one reading a photo, can take a photo longer to follow a move the decoder reads at once (an
/// illegal one: the decoder corrects its readings until it takes the move), and its lift and
/// set-down would date the move, and a ruling on it, at the next photo.
fn in_time(m: &DecodedMove, squares: shakmaty::Bitboard, ev: &Event) -> Event {
    let acts = matches!(ev.action, Action::Lift(_) | Action::Release(_) | Action::Place { .. } | Action::Remove(_));
    let on_its_squares = ev.action.square().is_some_and(|sq| squares.contains(sq));
    match m.released {
        Some(released) if acts && on_its_squares && ev.t > released => Event { t: released, ..*ev },
        _ => *ev,
    }
}

/// The events that make move `m` by `hand` (the mover's first hand, its number in doubt, where
/// none was seen): begun at `m.began`, done at `m.t`, none before `earliest`.
fn own_events(m: &DecodedMove, hand: Option<Hand>, earliest: f64) -> Vec<Event> {
    let side = m.before.turn();
    let (hand, hand_conf) = match hand {
        Some(h) => (h, None),
        None => (Hand { side, number: 1 }, Some(UNSEEN_HAND_CONF)),
    };
    let mut actions = Vec::new();
    match m.mv {
        Move::Castle { king, rook } => {
            let castling = if rook > king { shakmaty::CastlingSide::KingSide } else { shakmaty::CastlingSide::QueenSide };
            actions.extend([Action::Lift(king), Action::Release(castling.king_to(side)), Action::Lift(rook), Action::Release(castling.rook_to(side))]);
        }
        Move::EnPassant { from, to } => {
            let taken = Square::from_coords(to.file(), from.rank());
            actions.extend([Action::Remove(Some(taken)), Action::Lift(from), Action::Release(to)]);
        }
        Move::Normal { from, capture, to, promotion, .. } => {
            if capture.is_some() {
                actions.push(Action::Remove(Some(to)));
            }
            actions.extend([Action::Lift(from), Action::Release(to)]);
            if let Some(role) = promotion {
                actions.extend([Action::Remove(Some(to)), Action::Place { sq: to, piece: role.of(side) }]);
            }
        }
        Move::Put { .. } => {}
    }
    let conf = match m.illegal {
        true if sure_illegal(m) => MOVE_CONF,
        true => UNSEEN_ILLEGAL_CONF,
        false => MOVE_CONF.min(m.conf),
    };
    let n = actions.len().max(1) as f64;
    let began = m.began.max(earliest);
    let span = (m.t - began).max(0.0);
    actions
        .into_iter()
        .enumerate()
        .map(|(i, action)| Event { t: began + span * i as f64 / (n - 1.0).max(1.0), action, hand, conf: Some(conf), hand_conf })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Options;
    use shakmaty::{Chess, Color, Role};

    fn decoded(before: &Chess, mv: Move, began: f64, t: f64) -> DecodedMove {
        DecodedMove { mv, before: before.clone(), illegal: false, began, t, released: None, conf: 0.99 }
    }

    fn moves(records: &[Record]) -> Vec<String> {
        records.iter().filter_map(|r| if let Record::Move(m) = r { Some(crate::rules::record::uci(m.m)) } else { None }).collect()
    }

    #[test]
    fn moves_the_decoder_takes_back_go_back_out_of_the_engine_with_a_correction() {
        let start = Chess::default();
        let mut r = Reconciler::new(Engine::new(start.clone(), Options::default()), Vec::new());
        let line = |sans: &[&str]| {
            let mut p = start.clone();
            sans.iter()
                .map(|s| {
                    let m = s.parse::<shakmaty::san::San>().unwrap().to_move(&p).unwrap();
                    let d = decoded(&p, m, 0.0, 0.0);
                    p.play_unchecked(m);
                    d
                })
                .collect::<Vec<_>>()
        };
        let wrong = line(&["e4", "Nh6", "d4"]);
        let right = line(&["e4", "Nf6", "d4"]);
        let mut records = Vec::new();
        for (i, m) in wrong.iter().enumerate() {
            let t = 1.0 + 2.0 * i as f64;
            r.push(Vec::new(), vec![DecodedMove { began: t, t: t + 0.5, ..m.clone() }], t + 0.5, f64::INFINITY, &mut records);
        }
        // All three in the engine; the readings now show ...Nf6: the last two taken back.
        assert!(r.replace(7.0, 1, &wrong[1..], right[1..].to_vec(), &mut records));
        let corrections: Vec<_> = records.iter().filter_map(|r| if let Record::Correction(c) = r { Some(c.clone()) } else { None }).collect();
        assert_eq!(corrections.len(), 1);
        // From ply 1: 1.e4 stood on the board until Black's lift completed it, and is recorded
        // again as ...Nf6 completes it.
        assert_eq!((corrections[0].ply, corrections[0].replaced.clone(), corrections[0].by.clone()), (1, vec!["Nh6".to_string(), "d4".to_string()], vec!["Nf6".to_string(), "d4".to_string()]));
        r.finish(Vec::new(), Vec::new(), &mut records);
        r.engine_mut().finish(&mut records);
        let after: Vec<String> = records.iter().skip_while(|r| !matches!(r, Record::Correction(_))).filter_map(|r| if let Record::Move(m) = r { Some(crate::rules::record::uci(m.m)) } else { None }).collect();
        assert_eq!(after, ["e2e4", "g8f6", "d2d4"]);
        // A move not yet in the engine is only dropped: nothing was said of it.
        let mut r = Reconciler::new(Engine::new(start.clone(), Options::default()), Vec::new());
        let mut records = Vec::new();
        r.push(Vec::new(), vec![wrong[0].clone()], 0.1, 0.0, &mut records);
        assert!(!r.replace(0.2, 0, &wrong[..1], right[..1].to_vec(), &mut records));
        assert!(!records.iter().any(|r| matches!(r, Record::Correction(_))));
    }

    #[test]
    fn the_moves_the_board_shows_stand_one_after_another_while_the_tracker_is_behind() {
        let start = Chess::default();
        let mut r = Reconciler::new(Engine::new(start.clone(), Options::default()), Vec::new());
        let mut pos = start.clone();
        let mut both = Vec::new();
        for san in ["e4", "e5"] {
            let m = san.parse::<shakmaty::san::San>().unwrap().to_move(&pos).unwrap();
            both.push(decoded(&pos, m, 1.0, 1.5));
            pos.play_unchecked(m);
        }
        let mut records = Vec::new();
        // The tracker has given nothing out yet: both wait, and both stand.
        r.push(Vec::new(), both.clone(), 2.0, f64::NEG_INFINITY, &mut records);
        assert_eq!(r.standing(), both.iter().map(|m| m.mv).collect::<Vec<_>>());
        assert!(records.is_empty());
    }

    #[test]
    fn the_trackers_events_stand_where_they_make_the_decoded_move() {
        let start = Chess::default();
        let mut r = Reconciler::new(Engine::new(start.clone(), Options::default()), Vec::new());
        let w1 = Hand { side: Color::White, number: 1 };
        let b1 = Hand { side: Color::Black, number: 1 };
        let ev = |t, action, hand| Event { t, action, hand, conf: Some(0.95), hand_conf: None };
        let e4 = Move::Normal { role: Role::Pawn, from: Square::E2, capture: None, to: Square::E4, promotion: None };
        let mut records = Vec::new();
        let out = r.push(vec![ev(1.0, Action::Lift(Square::E2), w1), ev(1.5, Action::Release(Square::E4), w1)], vec![decoded(&start, e4, 1.0, 1.5)], 2.0, 2.5, &mut records);
        assert_eq!(out.events.len(), 2);
        assert!(!out.resync);
        // Black's lift completes White's move.
        let out = r.finish(vec![ev(3.0, Action::Lift(Square::E7), b1)], vec![], &mut records);
        assert_eq!(out.events.len(), 1);
        let mut ended = Vec::new();
        let mut engine = r.engine.clone();
        engine.finish(&mut ended);
        assert_eq!(moves(&records), ["e2e4"]);
    }

    #[test]
    fn where_no_hand_was_seen_the_trackers_events_are_dated_no_later_than_the_board_showed_the_move() {
        // Photos a move apart: the board showed 1.e4 done at 4.0 s, no hand seen; the tracker
        // followed it a photo later, at 6.0 s. Its lift and set-down stand, dated at 4.0 s; a
        // touch of another piece it saw then keeps its time.
        let start = Chess::default();
        let mut r = Reconciler::new(Engine::new(start.clone(), Options::default()), Vec::new());
        let w1 = Hand { side: Color::White, number: 1 };
        let ev = |t, action| Event { t, action, hand: w1, conf: Some(0.9), hand_conf: None };
        let e4 = Move::Normal { role: Role::Pawn, from: Square::E2, capture: None, to: Square::E4, promotion: None };
        let tracked = vec![ev(6.0, Action::Touch(Square::D2)), ev(6.0, Action::Lift(Square::E2)), ev(6.0, Action::Release(Square::E4))];
        let mut records = Vec::new();
        let seen = DecodedMove { released: Some(4.0), ..decoded(&start, e4, 4.0, 4.0) };
        let out = r.push(tracked.clone(), vec![seen], 8.0, 8.0, &mut records);
        assert_eq!(out.events.iter().map(|e| e.t).collect::<Vec<_>>(), [6.0, 4.0, 4.0]);
        // Where hands were in view, the tracker's times stand.
        let mut r = Reconciler::new(Engine::new(start.clone(), Options::default()), Vec::new());
        let out = r.push(tracked, vec![decoded(&start, e4, 4.0, 4.0)], 8.0, 8.0, &mut Vec::new());
        assert_eq!(out.events.iter().map(|e| e.t).collect::<Vec<_>>(), [6.0, 6.0, 6.0]);
    }

    #[test]
    fn a_move_the_trackers_events_miss_stands_on_its_own_events() {
        let start = Chess::default();
        let mut r = Reconciler::new(Engine::new(start.clone(), Options::default()), Vec::new());
        let w1 = Hand { side: Color::White, number: 1 };
        // The tracker saw f2 lifted (a shadow) and nothing else; the board showed 1.e4.
        let shadow = Event { t: 0.5, action: Action::Lift(Square::F2), hand: w1, conf: Some(0.9), hand_conf: None };
        let e4 = Move::Normal { role: Role::Pawn, from: Square::E2, capture: None, to: Square::E4, promotion: None };
        let mut records = Vec::new();
        let out = r.push(vec![shadow], vec![decoded(&start, e4, 1.0, 1.5)], 2.0, 2.5, &mut records);
        assert_eq!(out.events.iter().map(|e| e.action).collect::<Vec<_>>(), [Action::Lift(Square::E2), Action::Release(Square::E4)]);
        assert_eq!(out.events[0].hand, w1);
        assert!(out.resync, "the tracker starts again");
        assert_eq!(r.engine.board().piece_at(Square::E4), Some(Color::White.pawn()));
        let mut records2 = Vec::new();
        let mut engine = r.engine.clone();
        engine.finish(&mut records2);
        assert_eq!(moves(&records2), ["e2e4"]);
        assert!(!records.iter().chain(&records2).any(|r| matches!(r, Record::Ruling(_))), "{records:?}");
    }

    #[test]
    fn the_trackers_touches_before_a_move_it_missed_stand_with_the_moves_own_events() {
        use shakmaty::fen::Fen;
        let start: Chess = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2".parse::<Fen>().unwrap().into_position(shakmaty::CastlingMode::Standard).unwrap();
        let mut r = Reconciler::new(Engine::new(start.clone(), Options::default()), Vec::new());
        let w1 = Hand { side: Color::White, number: 1 };
        // White touched the queen, then played Bc4; the tracker gave out the touch and, the
        // move's lift and release not yet (a visit still measured), the move went out alone.
        let touch = Event { t: 0.3, action: Action::Touch(Square::D1), hand: w1, conf: Some(0.9), hand_conf: None };
        let bc4 = Move::Normal { role: Role::Bishop, from: Square::F1, capture: None, to: Square::C4, promotion: None };
        let mut records = Vec::new();
        assert!(r.push(vec![touch], vec![decoded(&start, bc4, 3.6, 5.0)], 5.3, 1.0, &mut records).events.is_empty());
        let out = r.push(Vec::new(), Vec::new(), 7.5, 1.0, &mut records);
        assert_eq!(out.events.iter().map(|e| e.action).collect::<Vec<_>>(), [Action::Touch(Square::D1), Action::Lift(Square::F1), Action::Release(Square::C4)]);
        r.finish(Vec::new(), Vec::new(), &mut records);
        r.engine_mut().finish(&mut records);
        assert!(records.iter().any(|r| matches!(r, Record::Ruling(x) if x.article == crate::rules::record::Article::A4_3_1)), "{records:?}");
    }

    #[test]
    fn each_kind_of_move_has_events_the_engine_takes_for_it() {
        use shakmaty::fen::Fen;
        let cases = [
            ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "e1g1"),
            ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "e1c1"),
            ("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", "e5d6"),
            ("1r2k3/2P5/8/8/8/8/8/4K3 w - - 0 1", "c7b8n"),
            ("rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2", "e4d5"),
        ];
        for (fen, uci) in cases {
            let start: Chess = fen.parse::<Fen>().unwrap().into_position(shakmaty::CastlingMode::Standard).unwrap();
            let mv = uci.parse::<shakmaty::uci::UciMove>().unwrap().to_move(&start).unwrap();
            let mut r = Reconciler::new(Engine::new(start.clone(), Options::default()), Vec::new());
            let mut records = Vec::new();
            r.finish(vec![], vec![decoded(&start, mv, 1.0, 2.0)], &mut records);
            let mut engine = r.engine.clone();
            engine.finish(&mut records);
            assert_eq!(moves(&records), [uci], "{fen}: {records:?}");
            assert!(!records.iter().any(|r| matches!(r, Record::Ruling(_))), "{fen}: {records:?}");
        }
    }

    #[test]
    fn an_illegal_move_the_decoder_is_sure_of_is_ruled_illegal_whoever_gave_its_events() {
        use shakmaty::fen::Fen;
        // Black checks with Bb4+; White, in check, plays Nf3 (a photo a move: lifted and set
        // down between two readings, the release at the tracker's doubt); Black plays on, Bxd2+.
        let start: Chess = "rnbqkbnr/pppp1ppp/8/4p3/6P1/3P4/PPP1PP1P/RNBQKBNR b KQkq - 0 2".parse::<Fen>().unwrap().into_position(shakmaty::CastlingMode::Standard).unwrap();
        let (w1, b1) = (Hand { side: Color::White, number: 1 }, Hand { side: Color::Black, number: 1 });
        let ev = |t, action, hand, conf| Event { t, action, hand, conf: Some(conf), hand_conf: None };
        let bb4 = Move::Normal { role: Role::Bishop, from: Square::F8, capture: None, to: Square::B4, promotion: None };
        let mut checked = start.clone();
        checked.play_unchecked(bb4);
        let nf3 = crate::read::hypothesis::Transition::illegal(&checked, Square::G1, Square::F3).expect("a knight's move");
        let illegal = DecodedMove { mv: nf3.mv, before: checked.clone(), illegal: true, began: 4.0, t: 4.0, released: None, conf: 1.0 };
        let bxd2 = Move::Normal { role: Role::Bishop, from: Square::B4, capture: Some(Role::Pawn), to: Square::D2, promotion: None };
        let replies = DecodedMove { mv: bxd2, before: nf3.after.clone(), illegal: false, began: 6.0, t: 6.0, released: None, conf: 1.0 };
        let nf3_events = [ev(4.0, Action::Lift(Square::G1), w1, 0.95), ev(4.0, Action::Release(Square::F3), w1, 0.5)];
        let bxd2_events = [ev(6.0, Action::Remove(Some(Square::D2)), b1, 0.95), ev(6.0, Action::Lift(Square::B4), b1, 0.95), ev(6.0, Action::Release(Square::D2), b1, 0.95)];
        let bb4_events = vec![ev(2.0, Action::Lift(Square::F8), b1, 0.95), ev(2.0, Action::Release(Square::B4), b1, 0.95)];
        // The tracker saw all of it; then it saw Bb4+ and nothing more (the move's own events).
        for tracked in [[&nf3_events[..], &bxd2_events[..]].concat(), Vec::new()] {
            let mut r = Reconciler::new(Engine::new(start.clone(), Options::default()), Vec::new());
            let mut records = Vec::new();
            r.push(bb4_events.clone(), vec![decoded(&start, bb4, 2.0, 2.0)], 3.0, 3.0, &mut records);
            r.push(tracked, vec![illegal.clone(), replies.clone()], 8.0, 8.0, &mut records);
            r.finish(Vec::new(), Vec::new(), &mut records);
            r.engine_mut().finish(&mut records);
            let rulings: Vec<_> = records.iter().filter_map(|r| if let Record::Ruling(x) = r { Some((x.verdict.as_str(), x.article.to_string(), x.t)) } else { None }).collect();
            assert_eq!(rulings, [("illegal", "7.5.1".to_string(), 4.0)], "{records:?}");
        }
    }

}
