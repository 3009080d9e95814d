//! The Article 4 rule engine: a state machine over physical events that rebuilds the game with
//! shakmaty and rules on every breach of the act of moving the pieces (FIDE Laws 2023).
//!
//! It knows nothing about pixels. It follows the move actually played, as a broadcast must, and
//! reports what the Laws require instead; events that contradict the board give a warning and
//! the engine resynchronises with the board.

mod describe;
mod obligation;
mod physical;
pub mod record;

use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::{Board, ByColor, CastlingMode, Chess, Color, EnPassantMode, FromSetup, Move, Piece, Position, Role, Square};

use crate::events::{Action, Event, Hand};
use obligation::{Commitment, Obligation, Touched};
use physical::{Physical, Tracked};
pub use record::{Article, ClaimClosed, Correction, Evidence, MoveRecord, Record, Ruling, Verdict, Warning};

/// The time control, which sets the penalty for an illegal move (7.5.5, A.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum TimeControl {
    /// Standard play: two minutes to the opponent.
    #[default]
    Standard,
    /// Rapid (Appendix A): one minute, only if claimed before the opponent's next move.
    Rapid,
    /// Blitz (Appendix B): as rapid.
    Blitz,
}

/// How the input was observed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    /// Clock presses are observed and complete moves (6.2); otherwise a move is complete when
    /// the opponent first touches a piece or the input ends.
    pub clock: bool,
    /// Every "j'adoube" is in the input, so its absence means none was said.
    pub declarations: bool,
    /// The time control.
    pub time_control: TimeControl,
    /// Touches the tracker is less sure of than this are doubtful: a ruling resting on them is
    /// a judgement, not a violation.
    pub min_conf: f32,
}

/// The `hand_conf` of an event the engine gives to the other player's hand (see
/// `Engine::reside`): which of that player's hands it was, the tracker's number does not say, so a
/// move it takes part in is not counted as played with two hands for sure (4.1).
const RESIDED_CONF: f32 = 0.5;

impl Default for Options {
    fn default() -> Options {
        Options { clock: false, declarations: false, time_control: TimeControl::Standard, min_conf: 0.7 }
    }
}

/// Why a touch may not bind the player.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Doubt {
    /// No declaration channel: "j'adoube" may have been said before it.
    Undeclared,
    /// The tracker was unsure it was deliberate.
    LowConfidence(f32),
}

/// One touched piece of the move in progress, with the event that touched it.
#[derive(Clone, Copy, Debug)]
struct Touch {
    touched: Touched,
    doubt: Option<Doubt>,
    evidence: Evidence,
    /// A doubtful touch made certain later (the piece lifted, or touched again surely): when.
    sure_from: Option<f64>,
}

/// The first legal move the hands left on the board (4.7: it is made).
#[derive(Clone, Copy, Debug)]
struct Made {
    m: Move,
    t: f64,
    evidence: Evidence,
    /// The tracker's confidence in the event that made it, where under `Options::min_conf` (a
    /// piece read set down where a hand only passed): a later change of move is then left to
    /// the arbiter.
    doubt: Option<f32>,
}

/// How a move came to be completed.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Completion {
    /// The mover pressed the clock with this hand.
    Press(Hand),
    /// The opponent touched a piece.
    Opponent,
    /// The input ended.
    End,
}

/// The state of the move in progress.
#[derive(Clone, Debug, Default)]
struct Turn {
    touches: Vec<Touch>,
    commitments: Vec<Commitment>,
    /// Hands that handled pieces since the board last stood as at the start of the move.
    hands: Vec<Handled>,
    made: Option<Made>,
    /// When the board first left the made move's position, if it has not come back to it.
    deviated_at: Option<f64>,
    /// The mover said "j'adoube": touches are adjustments until a piece is moved.
    declared: bool,
    /// The board as it stood at the last ruling on an unmade move (an illegal move, unfinished
    /// castling), so the end of the input does not rule on it twice.
    ruled_board: Option<shakmaty::Board>,
    /// Squares where a piece was set down by an event the tracker was unsure of (`conf` under
    /// `Options::min_conf`), with that confidence: an illegal move resting on one is left to the
    /// arbiter.
    unsure_set_down: Vec<(Square, f32)>,
}

/// A hand that handled a piece in the move in progress.
#[derive(Clone, Copy, Debug)]
struct Handled {
    hand: Hand,
    /// The lowest `hand_conf` of its events: under `Options::min_conf`, the tracker doubts it
    /// was this hand and not its player's other one at one of them at least, and a hand is one
    /// from its first event to its last (see `Engine::sure_hands`).
    conf: f32,
}

/// A breach the opponent may still claim (4.8).
#[derive(Clone, Copy, Debug)]
struct OpenClaim {
    offender: Color,
    article: Article,
    t: f64,
}

/// The rule engine. Feed it events in time order with [`Engine::apply`], then call
/// [`Engine::finish`] at the end of the input.
#[derive(Clone, Debug)]
pub struct Engine {
    opts: Options,
    pos: Chess,
    ply: u32,
    phys: Physical,
    turn: Turn,
    illegal_moves: ByColor<u8>,
    open_claims: Vec<OpenClaim>,
    /// A side whose move was completed by the opponent's touch before it pressed the clock.
    late_press: Option<Color>,
    warned_press_without_clock: bool,
    /// When an event last changed where the pieces stand.
    changed_t: f64,
    /// The time of the latest record given out: none that follows is dated earlier.
    said_t: f64,
    /// A hand the tracker gave to the side that had just moved, taken as the opponent's while it
    /// makes the opponent's move (see [`Engine::reside`]): its id, and the id it goes by.
    resided: Option<(Hand, Hand)>,
}

impl Engine {
    /// An engine for a game starting from `pos`.
    pub fn new(pos: Chess, opts: Options) -> Engine {
        let phys = Physical::new(pos.board());
        Engine {
            opts,
            pos,
            ply: 0,
            phys,
            turn: Turn::default(),
            illegal_moves: ByColor::new_with(|_| 0),
            open_claims: Vec::new(),
            late_press: None,
            warned_press_without_clock: false,
            changed_t: 0.0,
            said_t: 0.0,
            resided: None,
        }
    }

    /// The game position after the last completed move.
    pub fn position(&self) -> &Chess {
        &self.pos
    }

    /// Where the pieces physically stand now (a piece in a hand is on no square).
    pub fn board(&self) -> &shakmaty::Board {
        self.phys.board()
    }

    /// The legal move the pieces show now, with no piece of the mover's in hand, before it is
    /// completed (by the clock or the opponent's first touch): what a broadcast can show ahead
    /// of the game record.
    pub fn standing(&self) -> Option<Move> {
        if self.phys.side_holds_own(self.pos.turn()) {
            return None;
        }
        self.legal_result()
    }

    /// Moves recorded so far.
    pub fn ply(&self) -> u32 {
        self.ply
    }

    /// Processes one event, appending what it causes to `out`. Returns the event as the engine
    /// took it: by another player's hand where the tracker's side for the hand cannot be right
    /// (see `Engine::reside`; a warning says so).
    pub fn apply(&mut self, ev: &Event, out: &mut Vec<Record>) -> Event {
        let said = out.len();
        let ev = self.process(ev, out);
        self.said_t = out[said..].iter().map(Record::t).fold(self.said_t, f64::max);
        ev
    }

    /// What [`Engine::apply`] does, but for remembering when it last said something.
    fn process(&mut self, ev: &Event, out: &mut Vec<Record>) -> Event {
        let before = self.phys.board().clone();
        let ev = self.reside(ev, out);
        if ev.hand.side != self.pos.turn() && !self.opponent_event(&ev, out) {
            self.note_change(&before, ev.t);
            return ev;
        }
        self.mover_event(&ev, out);
        self.note_change(&before, ev.t);
        // The move it made for the opponent is down: the hand is its own side's again.
        if let Some((_, by)) = self.resided
            && by == ev.hand
            && !self.phys.holds(by)
            && matches!(ev.action, Action::Release(_) | Action::Remove(None) | Action::Place { .. })
        {
            self.resided = None;
        }
        ev
    }

    /// Remembers `t` as the last change of the pieces if the board no longer stands as `before`.
    fn note_change(&mut self, before: &shakmaty::Board, t: f64) {
        if self.phys.board() != before {
            self.changed_t = t;
        }
    }

    /// `ev` with the hand it is by. A hand of the player who has made a move (and holds no
    /// piece, the board showing that move) that lifts a piece of the opponent's begins the
    /// opponent's move: the tracker gives a hand the side of the board edge its arm comes from,
    /// which is wrong for a player reaching round the board, or for one person playing both
    /// sides (footage cut to the playing area shows no arm at all). A piece the move captures
    /// is not such a lift: until it is off the board (en passant), the move is not made. So
    /// does a hand of the player not to move that lifts a piece of the mover's, one none of its
    /// player's pieces could take where the pieces stand, before the mover has moved or holds a
    /// piece, or the mover's pawn released on the last rank: no player moves the opponent's
    /// pieces for them (one that could take it may be that player's move, the turn missed), and
    /// a pawn on the last rank is exchanged by its own player (the arm reaching across the board
    /// to do it is easily taken for the opponent's), as is a promotion piece of the mover's set
    /// there from off the board. The hand goes by the other id until it has set that move's
    /// piece down; a warning says so.
    fn reside(&mut self, ev: &Event, out: &mut Vec<Record>) -> Event {
        if let Some((hand, by)) = self.resided
            && ev.hand == hand
        {
            return Event { hand: by, hand_conf: Some(RESIDED_CONF), ..*ev };
        }
        let mover = self.pos.turn();
        // A promotion piece of the mover's set on the last rank: the mover's, whatever hand.
        if let Action::Place { sq, piece } = ev.action
            && ev.hand.side != mover
            && piece.color == mover
            && sq.rank() == mover.other().backrank()
            && !self.phys.holds(ev.hand)
        {
            let text = format!("{} set {} on {sq} while {} has the move: taken as {}'s hand.", ev.hand, describe::piece(piece, mover.other()), describe::side(mover), describe::side(mover));
            return self.take_as(ev, mover, text, out);
        }
        let Action::Lift(sq) = ev.action else { return *ev };
        let board = self.pos.board();
        let now = self.phys.board();
        let made = self.turn.made.is_some() && self.turn.deviated_at.is_none();
        let unexchanged = |p: &Tracked| p.piece.role == Role::Pawn && sq.rank() == mover.other().backrank();
        if ev.hand.side != mover
            && !self.phys.holds(ev.hand)
            && !self.phys.side_holds_own(mover)
            && now.attacks_to(sq, mover.other(), now.occupied()).is_empty()
            && let Some(p) = self.phys.at(sq).filter(|p| p.piece.color == mover && (now == board || unexchanged(p)))
        {
            let text = format!("{} lifted {} on {sq} while {} has the move: taken as {}'s hand.", ev.hand, describe::piece(p.piece, mover.other()), describe::side(mover), describe::side(mover));
            return self.take_as(ev, mover, text, out);
        }
        if !made || ev.hand.side != mover || self.phys.holds(ev.hand) || self.phys.side_holds_own(mover) {
            return *ev;
        }
        let Some(p) = self.phys.at(sq).filter(|p| p.piece.color != mover) else { return *ev };
        let text = format!("{} lifted {} on {sq} after {} made its move: taken as {}'s hand, beginning {}'s move.", ev.hand, describe::piece(p.piece, mover), describe::side(mover), describe::side(mover.other()), describe::side(mover.other()));
        self.take_as(ev, mover.other(), text, out)
    }

    /// `ev` by a hand of `side`'s, from now until that hand has set down the move's piece (see
    /// [`Engine::reside`]): the one of `side`'s already in the move, else the one of the same
    /// number; `why` is the warning saying so.
    fn take_as(&mut self, ev: &Event, side: Color, why: String, out: &mut Vec<Record>) -> Event {
        // The hand of that player's already in the move, if one is: the tracker's number is
        // the other player's count.
        let mut playing = self.turn.hands.iter().map(|h| h.hand).filter(|h| h.side == side);
        let number = match (playing.next(), playing.next()) {
            (Some(hand), None) => hand.number,
            _ => ev.hand.number,
        };
        let by = Hand { side, number };
        self.warn(ev.t, why, out);
        self.resided = Some((ev.hand, by));
        Event { hand: by, hand_conf: Some(RESIDED_CONF), ..*ev }
    }

    /// Ends the input: completes a move that was made, and says what is unfinished, as of the
    /// last event that moved a piece (what came after it, a stray touch or the hand leaving,
    /// changed nothing a ruling rests on).
    pub fn finish(&mut self, out: &mut Vec<Record>) {
        self.complete(self.changed_t, Completion::End, out);
    }

    /// An event by the player whose move is not in progress. Returns true when it begins that
    /// player's own move, so the event is to be handled as the mover's.
    fn opponent_event(&mut self, ev: &Event, out: &mut Vec<Record>) -> bool {
        let side = ev.hand.side;
        let mover = self.pos.turn();
        match ev.action {
            Action::Brush(_) | Action::Adjust => false,
            Action::Press => {
                if !self.opts.clock {
                    self.warn_press_without_clock(ev.t, out);
                } else if self.late_press == Some(side) {
                    self.late_press = None;
                } else {
                    self.warn(ev.t, format!("{} pressed the clock while {} has the move; ignored.", describe::side(side), describe::side(mover)), out);
                }
                false
            }
            Action::Knock(sq) => {
                let what = self.phys.at(sq).map_or_else(|| format!("a piece near {sq}"), |p| format!("{} on {sq}", describe::piece(p.piece, side)));
                // A knock the tracker is unsure of is for the arbiter to judge.
                let doubt = self.confidence_doubt(ev);
                let verdict = if doubt.is_some() { Verdict::Judgement } else { Verdict::Violation };
                self.rule(
                    ev.t,
                    verdict,
                    Article::A7_4,
                    side,
                    Vec::new(),
                    format!(
                        "{} displaced {what} while {}'s clock was running: under 7.4 the position is re-established and the arbiter may penalise {} (12.9).{}",
                        describe::side(side),
                        describe::side(mover),
                        describe::side(side),
                        match doubt {
                            Some(Doubt::LowConfidence(c)) => format!(" The arbiter decides: the piece may not have been knocked over at all (tracker confidence {c:.2})."),
                            _ => String::new(),
                        }
                    ),
                    vec![evidence(ev)],
                    out,
                );
                false
            }
            Action::Touch(_) | Action::Lift(_) | Action::Contact { .. } | Action::Release(_) | Action::Remove(_) | Action::Place { .. } => {
                let changed = self.phys.board() != self.pos.board();
                if self.phys.side_holds_own(mover) || (!changed && self.turn.made.is_none()) {
                    if let Action::Touch(sq) = ev.action {
                        let what = self.phys.at(sq).map_or_else(|| format!("the square {sq}"), |p| format!("{} on {sq}", describe::piece(p.piece, side)));
                        // A touch the tracker is unsure of is for the arbiter to judge.
                        let doubt = self.confidence_doubt(ev);
                        self.rule(
                            ev.t,
                            if doubt.is_some() { Verdict::Judgement } else { Verdict::Violation },
                            Article::A4_2_1,
                            side,
                            Vec::new(),
                            format!(
                                "{} touched {what} while {} has the move: under 4.2.1 only the player having the move may adjust pieces; there is no touch-move obligation, and the arbiter may penalise (12.9).{}",
                                describe::side(side),
                                describe::side(mover),
                                match doubt {
                                    Some(Doubt::LowConfidence(c)) => format!(" The arbiter decides: there is no breach if the contact was accidental (tracker confidence {c:.2})."),
                                    _ => String::new(),
                                }
                            ),
                            vec![evidence(ev)],
                            out,
                        );
                        return false;
                    }
                    if self.phys.side_holds_own(mover) {
                        self.warn(ev.t, format!("{} handled a piece ({} {}) while {} was still holding one; ignored.", describe::side(side), ev.action.name(), ev.action.square().map_or(String::new(), |s| s.to_string()), describe::side(mover)), out);
                        return false;
                    }
                    self.resync(ev.t, side, format!("{} moved a piece while {} had the move and had not moved", describe::side(side), describe::side(mover)), out);
                    return self.pos.turn() == side;
                }
                self.complete(ev.t, Completion::Opponent, out);
                self.pos.turn() == side
            }
        }
    }

    /// An event by the player whose move is in progress.
    fn mover_event(&mut self, ev: &Event, out: &mut Vec<Record>) {
        let hand = ev.hand;
        let made = self.turn.made.is_some();
        match ev.action {
            Action::Adjust => {
                if !made {
                    self.turn.declared = true;
                }
            }
            Action::Press => {
                if self.opts.clock {
                    self.complete(ev.t, Completion::Press(hand), out);
                } else {
                    self.warn_press_without_clock(ev.t, out);
                }
            }
            Action::Brush(sq) | Action::Knock(sq) => {
                if self.phys.at(sq).is_none() {
                    self.warn(ev.t, format!("{} on {sq}, but no piece stands there; ignored.", ev.action.name()), out);
                }
            }
            Action::Touch(sq) => {
                let Some(p) = self.phys.at(sq) else {
                    self.warn(ev.t, format!("touch on {sq}, but no piece stands there; ignored."), out);
                    return;
                };
                if made || self.turn.declared {
                    return;
                }
                let doubt = self.confidence_doubt(ev).or((!self.opts.declarations).then_some(Doubt::Undeclared));
                self.touch(ev, p, doubt, out);
            }
            Action::Lift(sq) => {
                let Some(p) = self.phys.lift(hand, sq) else {
                    self.warn(ev.t, format!("lift from {sq}, but no piece stands there; ignored."), out);
                    return;
                };
                self.handled(ev);
                if !made {
                    self.touch(ev, p, self.confidence_doubt(ev), out);
                }
            }
            Action::Contact { sq, piece: None } => {
                if !self.phys.holds(hand) {
                    self.warn(ev.t, format!("contact with {sq} by {hand}, which holds no piece; ignored."), out);
                    return;
                }
                self.handled(ev);
                if let (Some(p), false) = (self.phys.at(sq), made) {
                    self.touch(ev, p, self.confidence_doubt(ev), out);
                }
            }
            Action::Contact { sq, piece: Some(piece) } => {
                self.handled(ev);
                if !made {
                    self.promotion_piece(sq, piece);
                }
            }
            Action::Release(sq) => {
                // One square holds one piece, and no player takes their own: a piece set down
                // where one of its colour stands, not seen to leave, is the readings' mistake.
                if let (Some(p), Some(under)) = (self.phys.would_let_go(hand, hand.side, Some(sq)), self.phys.at(sq))
                    && p.piece.color == under.piece.color
                {
                    let (role, there) = (describe::role(p.piece.role), describe::piece(under.piece, hand.side));
                    self.warn(ev.t, format!("{role} released on {sq} by {hand}, where {there} stands: no piece takes one of its own colour, so the {role} is taken to be still in the hand."), out);
                    return;
                }
                let Some(p) = self.phys.let_go(hand, hand.side, Some(sq)) else {
                    self.warn(ev.t, format!("release on {sq} by {hand}, which holds no piece; ignored."), out);
                    return;
                };
                if let Some(under) = self.phys.put(sq, p) {
                    self.warn(ev.t, format!("{} released on {sq}, where {} stood; that piece is taken as captured.", describe::role(p.piece.role), describe::piece(under.piece, hand.side)), out);
                }
                self.set_down(sq, ev);
                self.handled(ev);
                if !made {
                    self.released(sq, p);
                    if p.origin == Some(sq) {
                        self.put_back(sq, ev);
                    }
                }
                self.board_changed(ev, out);
            }
            Action::Remove(Some(sq)) => {
                let Some(p) = self.phys.take(sq) else {
                    self.warn(ev.t, format!("remove from {sq}, but no piece stands there; ignored."), out);
                    return;
                };
                self.handled(ev);
                if !made {
                    self.touch(ev, p, self.confidence_doubt(ev), out);
                }
                self.board_changed(ev, out);
            }
            Action::Remove(None) => {
                if self.phys.let_go(hand, hand.side.other(), None).is_none() {
                    self.warn(ev.t, format!("{hand} put a piece aside but holds none; ignored."), out);
                    return;
                }
                self.handled(ev);
                self.board_changed(ev, out);
            }
            Action::Place { sq, piece } => {
                if let Some(under) = self.phys.put(sq, Tracked { piece, origin: None }) {
                    self.warn(ev.t, format!("{} placed on {sq}, where {} stood; that piece is taken off the board.", describe::role(piece.role), describe::piece(under.piece, hand.side)), out);
                }
                self.set_down(sq, ev);
                self.handled(ev);
                if !made {
                    self.promotion_piece(sq, piece);
                }
                self.board_changed(ev, out);
            }
        }
    }

    /// Remembers how sure the tracker was that `ev` set a piece down on `sq`.
    fn set_down(&mut self, sq: Square, ev: &Event) {
        self.turn.unsure_set_down.retain(|&(s, _)| s != sq);
        if let Some(Doubt::LowConfidence(c)) = self.confidence_doubt(ev) {
            self.turn.unsure_set_down.push((sq, c));
        }
    }

    fn confidence_doubt(&self, ev: &Event) -> Option<Doubt> {
        ev.conf.filter(|&c| c < self.opts.min_conf).map(Doubt::LowConfidence)
    }

    /// Records a deliberate touch of a piece that stood on the board when the move began.
    fn touch(&mut self, ev: &Event, p: Tracked, doubt: Option<Doubt>, out: &mut Vec<Record>) {
        self.close_claims(ev.t, ev.hand.side, out);
        self.turn.declared = false;
        let Some(origin) = p.origin else { return };
        if let Some(earlier) = self.turn.touches.iter_mut().find(|t| t.touched.origin == origin) {
            if earlier.sure_from.is_none() {
                match (earlier.doubt, doubt) {
                    (Some(_), None) => earlier.sure_from = Some(ev.t),
                    // A contact in doubt, then one surely made: the piece was touched, and only
                    // a "j'adoube" can have excused it.
                    (Some(Doubt::LowConfidence(_)), Some(Doubt::Undeclared)) => earlier.doubt = Some(Doubt::Undeclared),
                    _ => {}
                }
            }
            return;
        }
        self.turn.touches.push(Touch { touched: Touched { origin, piece: p.piece, t: ev.t }, doubt, evidence: evidence(ev), sure_from: None });
    }

    /// A piece put back on its own square: if the tracker doubts the release, it doubts the
    /// lift it ends (a piece the readings lost for a moment), so a touch that rests on that
    /// lift alone is doubtful too.
    fn put_back(&mut self, sq: Square, ev: &Event) {
        let Some(doubt) = self.confidence_doubt(ev) else { return };
        if let Some(touch) = self.turn.touches.iter_mut().find(|t| t.touched.origin == sq && t.evidence.ev == "lift" && t.sure_from.is_none()) {
            touch.doubt.get_or_insert(doubt);
        }
    }

    fn handled(&mut self, ev: &Event) {
        self.turn.declared = false;
        let conf = ev.hand_conf.unwrap_or(1.0);
        match self.turn.hands.iter_mut().find(|h| h.hand == ev.hand) {
            Some(h) => h.conf = h.conf.min(conf),
            None => self.turn.hands.push(Handled { hand: ev.hand, conf }),
        }
    }

    /// A piece let go on `sq` before any move was made: the commitments of 4.7 and 4.7.2.
    fn released(&mut self, sq: Square, p: Tracked) {
        let me = self.pos.turn();
        if p.piece.color != me {
            return;
        }
        let Some(origin) = p.origin else { return };
        let commitment = match p.piece.role {
            Role::King => shakmaty::CastlingSide::ALL.into_iter().find_map(|side| {
                let rook = self.pos.castles().rook(me, side)?;
                let rook_home = self.phys.at(rook).is_some_and(|r| r.origin == Some(rook));
                (origin == self.pos.board().king_of(me)? && sq == side.king_to(me) && rook_home).then_some(Commitment::Castle(side))
            }),
            Role::Pawn if sq.rank() == me.other().backrank() => Some(Commitment::PromotionSquare { from: origin, to: sq }),
            _ => None,
        };
        if let Some(c) = commitment.filter(|c| !self.turn.commitments.contains(c)) {
            self.turn.commitments.push(c);
        }
    }

    /// A promotion piece touched `sq`: the choice is final (4.4.4).
    fn promotion_piece(&mut self, sq: Square, piece: Piece) {
        let me = self.pos.turn();
        if piece.color != me || matches!(piece.role, Role::Pawn | Role::King) || sq.rank() != me.other().backrank() {
            return;
        }
        if self.turn.commitments.iter().any(|c| matches!(c, Commitment::PromotionPiece { to, .. } if *to == sq)) {
            return;
        }
        self.turn.commitments.push(Commitment::PromotionPiece { to: sq, role: piece.role });
    }

    /// After the mover put a piece down or took one off: is a move made (4.7)?
    fn board_changed(&mut self, ev: &Event, out: &mut Vec<Record>) {
        if self.phys.side_holds_own(self.pos.turn()) {
            return;
        }
        if self.phys.board() == self.pos.board() {
            // Back to the start of the move: the hands of the abandoned attempt no longer count.
            self.turn.hands.clear();
            if self.turn.made.is_some() {
                self.turn.deviated_at.get_or_insert(ev.t);
            }
            return;
        }
        match (self.legal_result(), self.turn.made) {
            (Some(m), None) => {
                let made = Made { m, t: ev.t, evidence: evidence(ev), doubt: ev.conf.filter(|&c| c < self.opts.min_conf) };
                self.turn.made = Some(made);
                self.judge_made(made, out);
            }
            (Some(m), Some(made)) if m == made.m => self.turn.deviated_at = None,
            (_, Some(_)) => {
                self.turn.deviated_at.get_or_insert(ev.t);
            }
            (None, None) => {}
        }
    }

    /// The legal move whose result is the board as it stands, if any.
    fn legal_result(&self) -> Option<Move> {
        move_shown(&self.pos, self.phys.board())
    }

    /// The obligation of the move in progress, from every touch.
    fn obligation(&self) -> Obligation {
        let touches: Vec<Touched> = self.turn.touches.iter().map(|t| t.touched).collect();
        self.obligation_of(&touches)
    }

    /// The obligation from the touches that are certain, each from when it became certain (a
    /// doubtful touch of a piece later lifted counts from the lift).
    fn certain_obligation(&self) -> Obligation {
        let mut touches: Vec<Touched> = self
            .turn
            .touches
            .iter()
            .filter_map(|t| match (t.doubt, t.sure_from) {
                (None, _) => Some(t.touched),
                (Some(_), Some(at)) => Some(Touched { t: at, ..t.touched }),
                (Some(_), None) => None,
            })
            .collect();
        touches.sort_by(|a, b| a.t.total_cmp(&b.t));
        self.obligation_of(&touches)
    }

    /// The obligation from `touches` (in time order) and the move's commitments.
    fn obligation_of(&self, touches: &[Touched]) -> Obligation {
        obligation::with_commitments(&self.pos, obligation::from_touches(&self.pos, touches), &self.turn.commitments)
    }

    /// A move was made: does it meet Article 4?
    fn judge_made(&mut self, made: Made, out: &mut Vec<Record>) {
        let all = self.obligation();
        let Obligation::Only(article, allowed) = &all else { return };
        if all.allows(made.m) {
            return;
        }
        let certain = self.certain_obligation();
        let me = self.pos.turn();
        // Breached for certain, and the doubtful touches do not change what the Law requires:
        // a violation. Breached only if a doubtful touch was deliberate, or breached for certain
        // but the article and the move required hang on a doubtful touch: the arbiter decides.
        let verdict = if certain == all { Verdict::Violation } else { Verdict::Judgement };
        let article = self.label(*article, made.m);
        let mut text = format!(
            "{} {}, then played {}: {}.",
            describe::side(me),
            self.touched_summary(made.m),
            describe::san(&self.pos, made.m),
            self.law(article, allowed)
        );
        if verdict == Verdict::Judgement {
            match &certain {
                Obligation::Only(sure_article, sure_allowed) if !certain.allows(made.m) => text.push_str(&format!(
                    " A breach is certain from the sure touches alone ({}); which of the two applies hangs on whether {}: the arbiter decides.",
                    self.law(self.label(*sure_article, made.m), sure_allowed),
                    self.doubts().join(", or whether ")
                )),
                _ => text.push_str(&format!(" The arbiter decides: there is no breach if {}.", self.doubts().join(", or if "))),
            }
        }
        let mut ev: Vec<Evidence> = self.turn.touches.iter().map(|t| t.evidence).collect();
        ev.push(made.evidence);
        self.rule(made.t, verdict, article, me, allowed.clone(), text, ev, out);
    }

    /// 4.3.3 is named only when an own piece was touched besides the piece(s) the player went
    /// on to move; otherwise the breach is of 4.3.2 (the opponent's pieces touched are never the
    /// ones moved, so they always remain).
    fn label(&self, article: Article, m: Move) -> Article {
        let me = self.pos.turn();
        let own_besides = self.turn.touches.iter().any(|t| t.touched.piece.color == me && !moves_piece(m, t.touched.origin));
        if article == Article::A4_3_3 && !own_besides { Article::A4_3_2 } else { article }
    }

    /// "touched the knight on g1": the touched pieces in order, at most three named, leaving
    /// out the piece(s) of the move `m` itself.
    fn touched_summary(&self, m: Move) -> String {
        let me = self.pos.turn();
        let others: Vec<&Touch> = self.turn.touches.iter().filter(|t| !moves_piece(m, t.touched.origin)).collect();
        let names: Vec<String> =
            others.iter().take(3).map(|t| format!("{} on {}", describe::piece(t.touched.piece, me), t.touched.origin)).collect();
        let more = if others.len() > 3 { ", ..." } else { "" };
        let released = self.turn.commitments.first().map(|c| match c {
            Commitment::Castle(side) => format!(" and released the king on {}", side.king_to(me)),
            Commitment::PromotionSquare { to, .. } => format!(" and released the pawn on {to}"),
            Commitment::PromotionPiece { to, role } => format!(" and touched {to} with a new {}", describe::role(*role)),
        });
        match names.len() {
            0 => format!("moved{}", released.unwrap_or_default()),
            _ => format!("touched {}{more}{}", names.join(", then "), released.unwrap_or_default()),
        }
    }

    /// The sentence of the Law, with the moves it allows.
    fn law(&self, article: Article, allowed: &[Move]) -> String {
        let me = describe::side(self.pos.turn());
        let list = describe::moves(&self.pos, allowed);
        match article {
            Article::A4_3_1 => format!("under 4.3.1 the first touched piece that can be moved must be moved ({list})"),
            Article::A4_3_2 => format!("under 4.3.2 the first touched opponent's piece that can be captured must be captured ({list})"),
            Article::A4_3_3 => format!("under 4.3.3, having touched pieces of both colours, {me} must play {list}"),
            Article::A4_4_1 => format!("under 4.4.1, having touched the king and then a rook, {me} must castle on that side ({list})"),
            Article::A4_4_2 => format!("under 4.4.2, having touched a rook before the king, {me} may not castle on that side and must play {list}"),
            Article::A4_4_3 => format!("under 4.4.3 castling with that rook is illegal, so {me} must make another king move ({list})"),
            Article::A4_4_4 => format!("under 4.4.4 the promotion piece was chosen when it touched the square ({list})"),
            Article::A4_7 => format!("under 4.7 a piece released as part of a legal move cannot be moved to another square ({list})"),
            Article::A4_7_2 => format!("under 4.7.2, once the king is released, {me} may make no move but {list}"),
            _ => format!("the Laws require {list}"),
        }
    }

    /// The doubts a judgement hangs on: "the contact with the pawn on f7 was accidental (tracker
    /// confidence 0.50)", "White said \"j'adoube\" before touching ...".
    fn doubts(&self) -> Vec<String> {
        let me = self.pos.turn();
        self.turn
            .touches
            .iter()
            .filter(|t| t.sure_from.is_none())
            .filter_map(|t| {
                let what = format!("{} on {}", describe::piece(t.touched.piece, me), t.touched.origin);
                match t.doubt? {
                    Doubt::Undeclared => Some(format!("{} said \"j'adoube\" before touching {what}", describe::side(me))),
                    Doubt::LowConfidence(c) => Some(format!("the contact with {what} was accidental (tracker confidence {c:.2})")),
                }
            })
            .collect()
    }

    /// Completes the move in progress.
    fn complete(&mut self, t: f64, how: Completion, out: &mut Vec<Record>) {
        let me = self.pos.turn();
        if self.phys.side_holds_own(me) {
            if how == Completion::End {
                return;
            }
            self.warn(t, format!("{} completed the move while still holding a piece; it is taken as put aside.", describe::side(me)), out);
            self.phys.drop_held(me);
        }
        if self.phys.board() == self.pos.board() {
            match how {
                Completion::Press(hand) => self.clock_without_move(t, hand, out),
                Completion::Opponent => {
                    self.warn(t, format!("{} touched a piece while {} has the move and has not moved; following the board.", describe::side(me.other()), describe::side(me)), out);
                    self.resync(t, me.other(), "the move was taken back".into(), out);
                }
                Completion::End => {}
            }
            return;
        }
        match (self.legal_result(), self.turn.made) {
            (Some(m), _) => self.complete_made(t, how, Shown::Legal(m), out),
            (None, Some(made)) => match self.moved_on(made.m) {
                Some((role, from, to)) => self.complete_made(t, how, Shown::MovedOn { made, role, from, to }, out),
                None => self.complete_unmade(t, how, out),
            },
            (None, None) => self.complete_unmade(t, how, out),
        }
    }

    /// The piece that the made move `made` released, moved on from where it was released to
    /// another square, and nothing else changed since that move (a piece of the opponent's may
    /// have been taken there): its role, the square it was released on and the one it stands on
    /// now.
    fn moved_on(&self, made: Move) -> Option<(Role, Square, Square)> {
        let mut after = self.pos.clone();
        after.play_unchecked(made);
        let (then, now) = (after.board(), self.phys.board());
        let me = self.pos.turn();
        let from = (then.by_color(me) & !now.by_color(me)).single_square()?;
        let to = (now.by_color(me) & !then.by_color(me)).single_square()?;
        let piece = then.piece_at(from)?;
        let released = differing(self.pos.board(), then).contains(from);
        let only_it = differing(then, now) == shakmaty::Bitboard::from(from) | shakmaty::Bitboard::from(to);
        (released && only_it && now.piece_at(to) == Some(piece)).then_some((piece.role, from, to))
    }

    /// A move was made, and the board shows `shown`: the move made, another legal move, or the
    /// made move's piece moved on to a square no legal move reaches.
    fn complete_made(&mut self, t: f64, how: Completion, shown: Shown, out: &mut Vec<Record>) {
        let me = self.pos.turn();
        let made = match (shown, self.turn.made) {
            (Shown::MovedOn { made, .. }, _) | (Shown::Legal(_), Some(made)) => made,
            (Shown::Legal(m), None) => {
                let made = Made { m, t, evidence: Evidence { t, ev: "release", sq: Some(m.to()) }, doubt: None };
                self.turn.made = Some(made);
                self.judge_made(made, out);
                made
            }
        };
        // The move the game goes on with: the one on the board where it is legal (the engine
        // follows play, and the ruling says what the Law requires); otherwise the released move
        // stands (4.7), the piece taken as put back where it was released.
        let m = match shown {
            Shown::Legal(m) => m,
            Shown::MovedOn { .. } => made.m,
        };
        let since = self.turn.deviated_at.unwrap_or(t);
        let changed = match shown {
            Shown::Legal(m) if m != made.m => Some(format!("changed it at {since:.1} s to {}", describe::san(&self.pos, m))),
            Shown::Legal(_) => None,
            Shown::MovedOn { role, from, to, .. } => Some(format!("at {since:.1} s moved the {} on from {from} to {to}", describe::role(role))),
        };
        if let Some(changed) = changed {
            let mut text = format!(
                "{} made the move {} at {:.1} s and {changed}: under 4.7 a piece released as part of a legal move cannot be moved to another square, so the move is {}.",
                describe::side(me),
                describe::san(&self.pos, made.m),
                made.t,
                describe::san(&self.pos, made.m)
            );
            let verdict = match made.doubt {
                Some(c) => {
                    text.push_str(&format!(" The arbiter decides: there is no breach if the piece was never let go there (tracker confidence {c:.2})."));
                    Verdict::Judgement
                }
                None => Verdict::Violation,
            };
            let moved_to = match shown {
                Shown::MovedOn { to, .. } => Some(to),
                Shown::Legal(_) => None,
            };
            self.rule(t, verdict, Article::A4_7, me, vec![made.m], text, vec![made.evidence, Evidence { t: since, ev: "release", sq: moved_to }], out);
        }
        let counts = how != Completion::End || !self.opts.clock;
        if counts && self.sure_hands() >= 2 {
            let text = format!(
                "{} played {} with two hands and completed it: under 4.1 and 7.5.4 this is penalised as an illegal move; the move to replay is {}.",
                describe::side(me),
                describe::san(&self.pos, m),
                describe::san(&self.pos, m)
            );
            self.illegal(t, Article::A7_5_4, vec![m], text, vec![made.evidence], out);
        } else if counts && self.turn.hands.len() >= 2 {
            let doubt = self.turn.hands.iter().map(|h| h.conf).fold(1.0, f32::min);
            let text = format!(
                "{} played {} with what the tracker took for two hands, one of them perhaps the other back (tracker confidence {doubt:.2}): under 4.1 and 7.5.4 a move played with two hands is penalised as an illegal move. The arbiter decides whether it was one hand or two.",
                describe::side(me),
                describe::san(&self.pos, m)
            );
            self.rule(t, Verdict::Judgement, Article::A7_5_4, me, vec![m], text, vec![made.evidence], out);
        } else if let (Completion::Press(press), [mover]) = (how, self.turn.hands.as_slice())
            && press != mover.hand
        {
            let text = format!(
                "{} played {} with one hand and pressed the clock with the other: under 6.2.3 this is not an illegal move, but the arbiter may penalise it (12.9).",
                describe::side(me),
                describe::san(&self.pos, m)
            );
            self.rule(t, Verdict::Violation, Article::A6_2_3, me, Vec::new(), text, vec![made.evidence, Evidence { t, ev: "press", sq: None }], out);
        }
        self.play(t, made.t, m, out);
        self.late_press = (how == Completion::Opponent && self.opts.clock).then_some(me);
    }

    /// The board shows no legal move: an illegal move, an unfinished castling or promotion, or
    /// something the engine cannot read.
    fn complete_unmade(&mut self, t: f64, how: Completion, out: &mut Vec<Record>) {
        let me = self.pos.turn();
        let ob = self.obligation();
        let ev: Vec<Evidence> = self.turn.touches.iter().map(|t| t.evidence).collect();
        let shape = self.attempt();
        let castling = self.turn.commitments.iter().find_map(|c| match c {
            Commitment::Castle(side) => self.pos.castling_moves(*side).first().copied(),
            _ => None,
        });
        if how == Completion::End && self.turn.ruled_board.as_ref() == Some(self.phys.board()) {
            return;
        }
        if let (Some(castle), Some(Attempt::Relocation { role: Role::King, .. })) = (castling, shape) {
            // 4.7.2: the king stands on its castling square, castling is legal, the rook has not
            // moved. The Arbiters' Manual leaves it to the arbiter: illegal, or unfinished castling.
            let text = format!(
                "{} released the king on {} and {}: the arbiter decides whether this is an illegal move or unfinished castling; under 4.7.2 the only move allowed is {}.",
                describe::side(me),
                castle.to(),
                if how == Completion::End { "the input ended before the rook moved" } else { "completed the move without moving the rook" },
                describe::san(&self.pos, castle)
            );
            self.rule(t, Verdict::Judgement, Article::A4_7_2, me, vec![castle], text, ev, out);
            self.turn.ruled_board = Some(self.phys.board().clone());
            return;
        }
        if how == Completion::End {
            match (shape, ob.article()) {
                (Some(_), Some(article)) => {
                    let text = format!(
                        "The input ended before {} completed the move, with the pieces in no legal arrangement; {}.",
                        describe::side(me),
                        self.law(article, ob.moves())
                    );
                    self.rule(t, Verdict::Judgement, article, me, ob.moves().to_vec(), text, ev, out);
                }
                _ => self.warn(t, format!("the input ended in the middle of {}'s move.", describe::side(me)), out),
            }
            return;
        }
        match shape {
            Some(Attempt::Unpromoted { from, to }) => {
                let queen = self.pos.legal_moves().into_iter().find(|m| m.from() == Some(from) && m.to() == to && m.promotion() == Some(Role::Queen));
                let text = format!(
                    "{} moved the pawn to {to} and completed the move without exchanging it: under 7.5.2 the move is illegal and the pawn is replaced by a queen.",
                    describe::side(me)
                );
                self.illegal(t, Article::A7_5_2, queen.into_iter().collect(), text, ev, out);
                if let Some(queen) = queen {
                    self.play(t, t, queen, out);
                }
            }
            Some(Attempt::Relocation { role, from, to }) => {
                // With no clock, the opponent playing on completes the move, later: the ruling
                // is dated when the pieces were left so, the breach an arbiter looks for.
                let at = if how == Completion::Opponent { self.changed_t.max(self.said_t) } else { t };
                let two_hands = if self.sure_hands() >= 2 { ", with two hands (one illegal move, 7.5.4)" } else { "" };
                let then = match &ob {
                    Obligation::Only(_, allowed) => format!("; the move that replaces it must be {} (4.3, 4.7)", describe::moves(&self.pos, allowed)),
                    _ => String::new(),
                };
                let completed = match how {
                    Completion::Opponent => format!("{} played on at {t:.1} s, completing it", describe::side(me.other())),
                    _ => "completed it".to_string(),
                };
                let text = format!(
                    "{} moved the {} from {from} to {to}{two_hands}, which is not a legal move, and {completed}: under 7.5.1 the position before it is reinstated{then}.",
                    describe::side(me),
                    describe::role(role)
                );
                // Vision unsure the piece was set down there (a piece of the other colour read
                // as it, a hand read as a piece): for the arbiter, and no illegal move counted.
                match self.turn.unsure_set_down.iter().find(|&&(sq, _)| sq == to) {
                    Some(&(_, c)) => {
                        let text = format!("{text} The arbiter decides: the tracker is unsure the {} was set down on {to} at all (confidence {c:.2}).", describe::role(role));
                        self.rule(at, Verdict::Judgement, Article::A7_5_1, me, ob.moves().to_vec(), text, ev, out);
                    }
                    None => self.illegal(at, Article::A7_5_1, ob.moves().to_vec(), text, ev, out),
                }
                self.turn.ruled_board = Some(self.phys.board().clone());
                if how == Completion::Opponent {
                    self.resync(t, me.other(), format!("{} played on after {}'s illegal move", describe::side(me.other()), describe::side(me)), out);
                }
            }
            None => {
                self.resync(t, me.other(), format!("the pieces {} left are not a move from the last position", describe::side(me)), out);
            }
        }
    }

    /// Reads what the mover tried to do when the board shows no legal move: one piece moved
    /// to another square (possibly capturing), or a pawn left unexchanged on the last rank.
    fn attempt(&self) -> Option<Attempt> {
        let me = self.pos.turn();
        let (now, before) = (self.phys.board(), self.pos.board());
        let gone = before.by_color(me) & !now.by_color(me);
        let mut moved_in = now.by_color(me) & !before.by_color(me);
        // A promotion piece appears where the pawn did not stand.
        for sq in now.by_color(me) & before.by_color(me) {
            if now.piece_at(sq) != before.piece_at(sq) {
                moved_in.add(sq);
            }
        }
        // Castling that is not legal: the king and the rook both on their castling squares.
        for side in shakmaty::CastlingSide::ALL {
            let (Some(king), Some(rook)) = (before.king_of(me), self.pos.castles().rook(me, side)) else { continue };
            let (king_to, rook_to) = (side.king_to(me), side.rook_to(me));
            if gone == shakmaty::Bitboard::from(king) | shakmaty::Bitboard::from(rook)
                && moved_in == shakmaty::Bitboard::from(king_to) | shakmaty::Bitboard::from(rook_to)
                && now.role_at(king_to) == Some(Role::King)
            {
                return Some(Attempt::Relocation { role: Role::King, from: king, to: king_to });
            }
        }
        let (from, to) = (gone.single_square()?, moved_in.single_square()?);
        let their_changes = (now.by_color(me.other()) ^ before.by_color(me.other())) & !shakmaty::Bitboard::from(to);
        if their_changes.any() && !(their_changes.count() == 1 && before.role_at(from) == Some(Role::Pawn)) {
            return None;
        }
        let role = before.role_at(from)?;
        let arrived = now.role_at(to)?;
        if role == Role::Pawn && to.rank() == me.other().backrank() && arrived == Role::Pawn {
            return Some(Attempt::Unpromoted { from, to });
        }
        Some(Attempt::Relocation { role, from, to })
    }

    /// Articles 6.2.4 and 7.5.3: the clock pressed and no move made.
    fn clock_without_move(&mut self, t: f64, hand: Hand, out: &mut Vec<Record>) {
        let me = hand.side;
        let ob = self.obligation();
        let text = format!(
            "{} pressed the clock without making a move: under 7.5.3 this is penalised as an illegal move, and {} still has the move.",
            describe::side(me),
            describe::side(me)
        );
        self.illegal(t, Article::A7_5_3, ob.moves().to_vec(), text, vec![Evidence { t, ev: "press", sq: None }], out);
    }

    /// How many hands handled pieces in the move in progress, the tracker sure of their identity
    /// (`hand_conf` at least `Options::min_conf`) in every event.
    fn sure_hands(&self) -> usize {
        self.turn.hands.iter().filter(|h| h.conf >= self.opts.min_conf).count()
    }

    /// Emits an illegal-move ruling with its penalty (7.5.5, A.3, A.5.2).
    fn illegal(&mut self, t: f64, article: Article, required: Vec<Move>, text: String, evidence: Vec<Evidence>, out: &mut Vec<Record>) {
        let me = self.pos.turn();
        let count = self.illegal_moves.get_mut(me);
        *count = count.saturating_add(1);
        let them = describe::side(me.other());
        let penalty = if *count >= 2 {
            if self.pos.has_insufficient_material(me.other()) {
                format!(" This is {}'s second completed illegal move, but {them} cannot checkmate by any series of legal moves: the game is drawn (7.5.5).", describe::side(me))
            } else {
                format!(" This is {}'s second completed illegal move: {} loses the game (7.5.5).", describe::side(me), describe::side(me))
            }
        } else {
            match self.opts.time_control {
                TimeControl::Standard => format!(" {them} gets two extra minutes (7.5.5)."),
                TimeControl::Rapid | TimeControl::Blitz => {
                    format!(" {them} gets one extra minute (A.3), if the arbiter intervenes or {them} claims before making the next move (A.5.2).")
                }
            }
        };
        self.rule(t, Verdict::Illegal, article, me, required, text + &penalty, evidence, out);
    }

    /// Plays `m` on the game: the move record, and a fresh turn for the opponent.
    fn play(&mut self, t: f64, made_t: f64, m: Move, out: &mut Vec<Record>) {
        let side = self.pos.turn();
        let san = SanPlus::from_move_and_play_unchecked(&mut self.pos, m).to_string();
        self.ply += 1;
        let fen = Fen::from_position(&self.pos, EnPassantMode::Legal).to_string();
        out.push(Record::Move(MoveRecord { t, made_t, ply: self.ply, side, m, san, fen }));
        self.phys = Physical::new(self.pos.board());
        self.turn = Turn::default();
    }

    /// Adopts the board as it stands, with `turn` to move, when the events cannot be
    /// reconciled with the game; if the board is no legal position, keeps the last one.
    fn resync(&mut self, t: f64, turn: Color, why: String, out: &mut Vec<Record>) {
        let mut setup = self.pos.to_setup(EnPassantMode::Legal);
        setup.board = self.phys.board().clone();
        setup.ep_square = None;
        if turn == Color::White && self.pos.turn() == Color::Black {
            setup.fullmoves = setup.fullmoves.saturating_add(1);
        }
        setup.turn = turn;
        // Castling rights the board no longer supports are dropped, nothing else is forgiven.
        // A board no legal position shows, one where the side that moved left its king in check
        // (a move made in check that does not meet it), is followed as that move played.
        let played = || crate::read::hypothesis::Transition::relocation(&self.pos, self.phys.board()).map(|tr| tr.after).filter(|p| p.turn() == turn);
        let pos = match Chess::from_setup(setup, CastlingMode::Standard) {
            Ok(pos) => Some(pos),
            Err(e) => e.ignore_invalid_castling_rights().ok().or_else(played),
        };
        match pos {
            Some(pos) => {
                let fen = Fen::from_position(&pos, EnPassantMode::Legal);
                self.warn(t, format!("{why}; following the board from {fen}."), out);
                self.pos = pos;
            }
            None => {
                let fen = Fen::from_position(&self.pos, EnPassantMode::Legal);
                self.warn(t, format!("{why}, and the board is not a legal position; keeping {fen}."), out);
            }
        }
        self.phys = Physical::new(self.pos.board());
        self.turn = Turn::default();
        self.late_press = None;
    }

    /// The claimant touched a piece with intent: 4.8 closes its claims.
    fn close_claims(&mut self, t: f64, claimant: Color, out: &mut Vec<Record>) {
        let (closed, open): (Vec<OpenClaim>, Vec<OpenClaim>) = self.open_claims.drain(..).partition(|c| c.offender != claimant);
        self.open_claims = open;
        for c in closed {
            out.push(Record::ClaimClosed(ClaimClosed {
                t,
                side: claimant,
                breach_t: c.t,
                breach_article: c.article,
                text: format!(
                    "{} touched a piece with the intention of moving it: under 4.8 {} can no longer claim the {} breach of {:.1} s.",
                    describe::side(claimant),
                    describe::side(claimant),
                    c.article,
                    c.t
                ),
            }));
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn rule(&mut self, t: f64, verdict: Verdict, article: Article, side: Color, mut required: Vec<Move>, text: String, evidence: Vec<Evidence>, out: &mut Vec<Record>) {
        required.sort_by_key(|&m| record::uci(m));
        if article.is_claimable_under_4_8() && verdict != Verdict::Illegal {
            self.open_claims.push(OpenClaim { offender: side, article, t });
        }
        out.push(Record::Ruling(Ruling { t, verdict, article, side, required, text, evidence }));
    }

    fn warn(&self, t: f64, text: String, out: &mut Vec<Record>) {
        out.push(Record::Warning(Warning { t, text }));
    }

    fn warn_press_without_clock(&mut self, t: f64, out: &mut Vec<Record>) {
        if !self.warned_press_without_clock {
            self.warned_press_without_clock = true;
            self.warn(t, "the input has clock presses, but --clock was not given: presses are ignored and moves complete at the opponent's first touch.".into(), out);
        }
    }
}

/// What the board shows when a move is completed (4.7).
#[derive(Clone, Copy, Debug)]
enum Shown {
    /// A legal move from the position before it: the move made, another, or the first one made.
    Legal(Move),
    /// No legal move: the piece of the move `made`, released on `from`, moved on to `to`.
    MovedOn { made: Made, role: Role, from: Square, to: Square },
}

/// What the mover left on the board when it is no legal move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Attempt {
    /// One piece went from one square to another.
    Relocation { role: Role, from: Square, to: Square },
    /// A pawn stands on the last rank, not exchanged (7.5.2).
    Unpromoted { from: Square, to: Square },
}

/// The legal move of `pos` whose result is `board`, if any: only moves whose origin and
/// destination changed are tried.
pub fn move_shown(pos: &Chess, board: &Board) -> Option<Move> {
    let changed = differing(pos.board(), board);
    pos.legal_moves().into_iter().find(|&m| {
        m.from().is_some_and(|f| changed.contains(f)) && changed.contains(m.to()) && {
            let mut after = pos.clone();
            after.play_unchecked(m);
            after.board() == board
        }
    })
}

/// The squares whose content differs between `a` and `b`.
pub fn differing(a: &Board, b: &Board) -> shakmaty::Bitboard {
    let mut differ = a.occupied() ^ b.occupied();
    for color in Color::ALL {
        differ |= a.by_color(color) ^ b.by_color(color);
    }
    for role in Role::ALL {
        differ |= a.by_role(role) ^ b.by_role(role);
    }
    differ
}

/// Whether `m` moves the piece that stood on `sq` (for castling, the king or the rook).
fn moves_piece(m: Move, sq: Square) -> bool {
    m.from() == Some(sq) || matches!(m, Move::Castle { rook, .. } if rook == sq)
}

fn evidence(ev: &Event) -> Evidence {
    Evidence { t: ev.t, ev: ev.action.name(), sq: ev.action.square() }
}
