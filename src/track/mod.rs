//! The tracker: turns the model's per-frame [`Reading`]s into the physical events of the event
//! contract (`docs/events.md`): `touch`, `brush`, `contact`, `lift`, `release`, `remove`,
//! `place` and `knock`, each with the hand that did it and the tracker's `conf`.
//!
//! It keeps a stable board (`squares`: hysteresis in time, and readings under a hand are not
//! trusted), follows each side's hands as blobs of the hand map with stable ids (`hands`: `w1`,
//! `w2`, `b1`, `b2`; the number comes from the board edge the arm crosses), turns contact
//! readings into touches with a confidence (`contacts`), remembers where each hand was
//! (`carry`: a held piece kept at a piece it could take, then carried away, met it), and reads
//! the dated observations in time order against what each hand holds (`interpret`). So the
//! number of hands in a move is known (4.1), and where vision cannot tell a brush from a touch
//! it says so through `conf`.
//!
//! Events come out when the tracker is sure nothing earlier can still be seen: a change is
//! dated back to when the hand made it, so an event waits until every square has been seen
//! uncovered since then. A square hidden for long holds the output back until it is seen.
//!
//! The clock is not in view: the tracker never emits `press`, and never `adjust` (a spoken
//! "j'adoube" is not in the pictures). The rule engine completes a move at the opponent's first
//! touch or at the end of the input.

mod carry;
mod contacts;
pub mod displace;
mod hands;
mod interpret;
pub mod sight;
mod squares;

use opencv::core::Mat;
use shakmaty::{Board, Color, Piece, Square};

pub use displace::Visit;
pub use hands::Track;
pub use sight::Sight;

use crate::detect::Reading;
use crate::events::Event;
use contacts::Contacts;
use displace::Stills;
use hands::{Hands, Left};
use interpret::{Interpreter, Observation};
use squares::{Seen, Squares};

/// A hand that leaves the board holding a piece has carried it off only if the piece has not
/// appeared on a square within this many seconds (a piece set down as the hand withdraws is
/// often seen a few frames after the hand).
const LEFT_GRACE_S: f64 = 1.5;

/// The `hand_conf` of events by a hand whose number is in doubt (it came alone and took another
/// number than its side's last hand), under the rule engine's default `--min-conf`: whether a
/// player used two hands (4.1, 7.5.4) is then left to the arbiter.
const IDENTITY_CONF: f32 = 0.6;

/// The tracker's thresholds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    /// A square's class reading is trusted only while less than this fraction is covered.
    pub cover_max: f32,
    /// A class must have at least this probability to confirm or change a square.
    pub class_min: f32,
    /// A square's kind (empty, White, Black) must have at least this probability to change it:
    /// higher than to confirm it (hysteresis in confidence).
    pub change_min: f32,
    /// Trusted readings in a row that must agree before a square changes (or is found knocked).
    pub hold: usize,
    /// A piece is found toppled or displaced when no class reaches this probability...
    pub knock_class_max: f32,
    /// ...in this many trusted readings in a row, the square clearly occupied.
    pub knock_hold: usize,
    /// Contact probability from which a hand is taken to touch the piece.
    pub contact_min: f32,
    /// Contact probability from which a piece in its player's hand is taken to touch a piece of
    /// the other colour it could take (a capture begun, 4.3.3): lower than
    /// [`Options::contact_min`], since a held piece hovering at a piece it can take is seldom
    /// anything else, and a hand holding a piece reads weaker contact (on `fixtures/variants`,
    /// a bishop held on Black's f7 pawn read 0.65-0.83 for 0.6 s).
    pub capture_contact_min: f32,
    /// Contact probability from which a reading at a piece that then leaves its square dates
    /// the lift: the piece went with the last such reading (the hand's grasp; the contact read
    /// weakens as the hand lifts it away).
    pub grasp_min: f32,
    /// Longest gap, in seconds, inside one contact (missed readings).
    pub contact_gap_s: f64,
    /// A short contact followed this soon (seconds) by the same hand's contact elsewhere, or its
    /// grasp of another piece, is a graze on the way. (0.6: a hand reaching for the king
    /// brushes the queen beside it half a second before the lift is dated; every scripted touch
    /// of the rendered clips comes 1.2 s or more before the hand's next act.)
    pub graze_s: f64,
    /// Hand-map probability from which a cell belongs to a hand.
    pub hand_min: f32,
    /// A blob grows from its cells at [`Options::hand_min`] over neighbours down to this
    /// probability (hysteresis: a palm and its arm stay one blob across a weaker wrist).
    pub hand_grow: f32,
    /// Smallest blob, in cells, that is a hand.
    pub hand_min_cells: usize,
    /// Seconds a hand may go unseen before its track ends.
    pub hand_lost_s: f64,
    /// A hand within this many squares of a square's centre is at that square.
    pub near_squares: f32,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            cover_max: 0.35,
            class_min: 0.5,
            change_min: 0.75,
            hold: 3,
            knock_class_max: 0.3,
            knock_hold: 10,
            contact_min: 0.8,
            capture_contact_min: 0.5,
            grasp_min: 0.5,
            contact_gap_s: 0.12,
            graze_s: 0.6,
            hand_min: 0.5,
            hand_grow: 0.25,
            hand_min_cells: 12,
            hand_lost_s: 0.2,
            near_squares: 1.0,
        }
    }
}

/// Follows the board and the hands over a sequence of readings.
#[derive(Clone, Debug)]
pub struct Tracker {
    opts: Options,
    squares: Squares,
    hands: Hands,
    contacts: Contacts,
    interpreter: Interpreter,
    /// Hands that left the board, waiting until the board around them is seen again.
    leaving: Vec<Left>,
    last_t: f64,
    /// The player whose hands are expected next (see [`Tracker::expect`]).
    expected: Color,
    /// Every event dated before this has been given out.
    flushed: f64,
    /// Each square's view before and after a hand's visit.
    stills: Stills,
    /// The visits measured, for `visits.jsonl`.
    measured: Vec<Visit>,
    /// Touches read where the footage showed them too poorly to report.
    withheld: u64,
}

impl Tracker {
    /// A tracker for a game whose pieces stand as on `start` (from the game's FEN).
    pub fn new(start: Board, options: Options) -> Tracker {
        Tracker {
            opts: options,
            squares: Squares::new(start.clone()),
            hands: Hands::default(),
            contacts: Contacts::default(),
            interpreter: Interpreter::new(start),
            leaving: Vec::new(),
            last_t: f64::NEG_INFINITY,
            expected: Color::White,
            flushed: f64::NEG_INFINITY,
            stills: Stills::default(),
            measured: Vec::new(),
            withheld: 0,
        }
    }

    /// A tracker started again from `start` (the decoder's board) that keeps the squares' views
    /// and the camera's noise floor (the visits under way are dropped).
    pub fn restart(mut self, start: Board) -> Tracker {
        self.stills.restart();
        let (expected, withheld) = (self.expected, self.withheld);
        Tracker { stills: self.stills, expected, withheld, ..Tracker::new(start, self.opts) }
    }

    /// Takes in the warped board at `t` (each frame there is one, read by the model or not):
    /// visits of the hands that ended are measured. An error of OpenCV's leaves the views as
    /// they were.
    pub fn look(&mut self, t: f64, warped: &Mat) -> opencv::Result<()> {
        let mut visits = Vec::new();
        self.stills.look(t, warped, self.squares.board().occupied(), &mut visits)?;
        let mut touches = Vec::new();
        for visit in visits {
            // A piece that left (or came) during the visit was lifted or set down, not touched.
            if self.squares.changed(visit.sq) >= visit.from {
                continue;
            }
            self.measured.push(visit);
            self.contacts.visited(visit, &mut touches);
        }
        self.take_touches(touches);
        Ok(())
    }

    /// The visits measured since the last call.
    pub fn take_visits(&mut self) -> Vec<Visit> {
        std::mem::take(&mut self.measured)
    }

    /// Takes in the next reading and appends to `out` the events it is now sure of, in time
    /// order. Frames may be skipped (times come from `reading.t`); a reading earlier than the
    /// previous one, or with a time that is not a number, is ignored.
    pub fn push(&mut self, reading: &Reading, out: &mut Vec<Event>) {
        let t = reading.t;
        if t.is_nan() || t < self.last_t {
            return;
        }
        self.last_t = t;
        self.hands.update(&reading.hands, t, self.expected, &self.opts, &mut self.leaving);
        // A hand seen over the board again did not carry anything off: it came back (or its
        // track was lost for a moment).
        let tracks = self.hands.tracks();
        self.leaving.retain(|left| !tracks.iter().any(|tr| tr.hand == left.hand && tr.over_board && tr.seen > left.t));
        let mut seen = Vec::new();
        self.squares.update(reading, &self.hands, &self.opts, &mut seen);
        self.take_seen(seen);
        let hands = &self.hands;
        self.stills.hands(reading, self.opts.hand_min, |sq| hands.nearest(&reading.hands, sq).map(|(h, _)| h));
        let mut touches = Vec::new();
        let capturable = self.interpreter.capturable();
        self.contacts.update(reading, &self.hands, &self.squares, contacts::Marks { capturable, visiting: self.stills.visiting() }, &self.opts, &mut touches);
        self.interpreter.see_hands(reading, &self.hands);
        self.take_touches(touches);
        let settled = self.squares.settled();
        self.take_leaving(|left| left.t + LEFT_GRACE_S < settled);
        let until = settled.min(self.contacts.pending_since()).min(self.stills.pending_since(t)).min(t);
        self.flush(until, out);
        self.flushed = self.flushed.max(until);
    }

    /// Ends the input: decides what is pending and appends the remaining events.
    pub fn finish(&mut self, out: &mut Vec<Event>) {
        let mut seen = Vec::new();
        self.squares.finish(&mut seen);
        self.take_seen(seen);
        let mut touches = Vec::new();
        self.contacts.finish(&self.squares, &self.opts, &mut touches);
        self.take_touches(touches);
        self.take_leaving(|_| true);
        self.flush(f64::INFINITY, out);
    }

    /// Appends the events dated before `until`; those by a hand whose number is in doubt carry
    /// [`IDENTITY_CONF`] as their `hand_conf`.
    fn flush(&mut self, until: f64, out: &mut Vec<Event>) {
        let from = out.len();
        self.interpreter.flush(until, &self.squares, out);
        for c in self.interpreter.take_corrections() {
            self.squares.correct(c, self.last_t);
        }
        for e in out[from..].iter_mut().filter(|e| self.hands.doubtful(e.hand, e.t)) {
            e.hand_conf = Some(IDENTITY_CONF);
        }
    }

    /// The side whose hands are expected next over the board (the player to move, or the
    /// opponent once the move stands on the board): a new hand whose arm crosses a side edge is
    /// taken to be that player's. White until told.
    pub fn expect(&mut self, side: Color) {
        self.expected = side;
    }

    /// Every event dated before this time has been given out (no later reading can add one).
    pub fn flushed(&self) -> f64 {
        self.flushed
    }

    /// The stable board as the tracker believes it now.
    pub fn board(&self) -> &Board {
        self.squares.board()
    }

    /// The hands it follows now.
    pub fn hands(&self) -> &[Track] {
        self.hands.tracks()
    }

    fn take_seen(&mut self, seen: Vec<Seen>) {
        for s in seen {
            match s {
                Seen::Change { sq, to, t, hand } => self.interpreter.push(t, Observation::Change { sq, to, hand }),
                Seen::Knock { sq, t, hand } => self.interpreter.push(t, Observation::Knock { sq, hand }),
                Seen::Glimpse { sq, piece, first, last, hand } => {
                    self.interpreter.push(first, Observation::Glimpse { sq, piece, hand });
                    self.interpreter.push(last, Observation::GlimpseGone { sq, hand });
                }
            }
        }
    }

    /// Whether the footage shows touches, and why not (see `sight`).
    pub fn sight(&self) -> Sight {
        let (blur, contrast) = self.stills.picture();
        Sight::judge(blur, contrast, self.stills.floor(), self.withheld)
    }

    fn take_touches(&mut self, touches: Vec<contacts::Touch>) {
        if !touches.is_empty() && !self.sight().reported {
            self.withheld += touches.len() as u64;
            return;
        }
        for touch in touches {
            self.interpreter.push(touch.t, Observation::Touch { sq: touch.sq, hand: touch.hand, conf: touch.conf, brush: touch.brush });
        }
    }

    fn take_leaving(&mut self, ready: impl Fn(&Left) -> bool) {
        let (now, later): (Vec<Left>, Vec<Left>) = self.leaving.drain(..).partition(|l| ready(l));
        self.leaving = later;
        for left in now {
            self.interpreter.push(left.t + LEFT_GRACE_S, Observation::Left { hand: left.hand, seen: left.t });
        }
    }
}

/// Sets what stands on `sq` of `board`: `piece`, or nothing.
fn set_content(board: &mut Board, sq: Square, piece: Option<Piece>) {
    match piece {
        Some(piece) => board.set_piece_at(sq, piece),
        None => {
            board.discard_piece_at(sq);
        }
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::{Color, Piece, Square};

    use super::*;
    use crate::detect::reading::{CLASSES, piece_class};
    use crate::detect::{HandMap, SquareReading};
    use crate::events::{Action, Hand};

    /// A reading of `board` with every square sure of its content and nothing covered.
    fn reading(t: f64, board: &Board) -> Reading {
        let blank = SquareReading { classes: [0.0; CLASSES], cover: 0.0, contact: 0.0 };
        let mut squares = [blank; 64];
        for sq in Square::ALL {
            squares[sq as usize].classes[piece_class(board.piece_at(sq))] = 1.0;
        }
        let map = HandMap { side: 54, cells_per_square: 6, margin: 3, white: vec![0.0; 54 * 54], black: vec![0.0; 54 * 54] };
        Reading { frame: (t * 20.0) as u64, t, squares, hands: map }
    }

    /// Fills a column of cells from `row0` to `row1` (inclusive) as a 3-cell-wide arm.
    fn arm(map: &mut [f32], col: usize, rows: std::ops::RangeInclusive<usize>) {
        for r in rows {
            for c in col - 1..=col + 1 {
                map[r * 54 + c] = 0.9;
            }
        }
    }

    #[test]
    fn a_square_changes_only_after_trusted_readings_agree() {
        let start = Board::default();
        let mut tracker = Tracker::new(start.clone(), Options::default());
        let mut out = Vec::new();
        let mut empty_g1 = start.clone();
        empty_g1.discard_piece_at(Square::G1);
        let mut t = 0.0;
        let mut feed = |tracker: &mut Tracker, board: &Board, cover: f32, n: usize, out: &mut Vec<Event>| {
            for _ in 0..n {
                t += 0.05;
                let mut r = reading(t, board);
                r.squares[Square::G1 as usize].cover = cover;
                tracker.push(&r, out);
            }
        };
        // Two blurred frames, then the knight again: nothing changes.
        feed(&mut tracker, &empty_g1, 0.0, 2, &mut out);
        feed(&mut tracker, &start, 0.0, 1, &mut out);
        assert_eq!(tracker.board(), &start);
        // Under a hand, the reading is not trusted however long it lasts.
        feed(&mut tracker, &empty_g1, 0.9, 10, &mut out);
        assert_eq!(tracker.board(), &start);
        assert!(out.is_empty(), "{out:?}");
        // Three trusted readings of an empty g1: the knight left.
        feed(&mut tracker, &empty_g1, 0.0, 3, &mut out);
        assert_eq!(tracker.board(), &empty_g1);
        tracker.finish(&mut out);
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(out[0].action, Action::Lift(Square::G1));
        // No hand or contact was seen: dated at the first trusted empty reading (the 14th), not
        // at the third, which confirmed it.
        assert!((out[0].t - 0.70).abs() < 1e-9, "{out:?}");
    }

    #[test]
    fn a_piece_lost_by_the_readings_and_read_again_in_no_sure_colour_is_put_back() {
        let start = Board::default();
        let mut gone = start.clone();
        gone.discard_piece_at(Square::B8);
        // The black knight read again, surely a piece, but White's as likely as Black's.
        let unsure = |r: &mut Reading| {
            let mut classes = [0.0; CLASSES];
            classes[piece_class(Some(Piece::from_char('N').unwrap()))] = 0.5;
            classes[piece_class(Some(Piece::from_char('n').unwrap()))] = 0.46;
            classes[0] = 0.04;
            r.squares[Square::B8 as usize].classes = classes;
        };
        let mut tracker = Tracker::new(start.clone(), Options::default());
        let (mut out, mut t) = (Vec::new(), 0.0);
        let mut feed = |tracker: &mut Tracker, board: &Board, n: usize, edit: &dyn Fn(&mut Reading), out: &mut Vec<Event>| {
            for _ in 0..n {
                t += 0.05;
                let mut r = reading(t, board);
                edit(&mut r);
                tracker.push(&r, out);
            }
        };
        feed(&mut tracker, &start, 4, &|_| {}, &mut out);
        // Gone for 0.4 s, longer than a shadow (see `a_piece_back_on_its_square_at_once_never_left`).
        feed(&mut tracker, &gone, 8, &|_| {}, &mut out);
        assert_eq!(tracker.board(), &gone, "read gone, with no hand near: lifted");
        feed(&mut tracker, &gone, 6, &unsure, &mut out);
        tracker.finish(&mut out);
        // No hand came near b8: the knight is back where it stood.
        assert_eq!(tracker.board(), &start);
        let got: Vec<(&str, Option<Square>)> = out.iter().map(|e| (e.action.name(), e.action.square())).collect();
        assert_eq!(got, [("lift", Some(Square::B8)), ("release", Some(Square::B8))]);
    }

    #[test]
    fn only_a_piece_once_recognised_is_found_knocked() {
        let start = Board::default();
        // The queen on d1 read as no kind in particular: occupied, its classes spread thin.
        let doubtful = |r: &mut Reading| r.squares[Square::D1 as usize].classes = [0.0, 0.2, 0.2, 0.2, 0.2, 0.2, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        let run = |recognised_first: usize| {
            let mut tracker = Tracker::new(start.clone(), Options::default());
            let (mut out, mut t) = (Vec::new(), 0.0);
            for i in 0..recognised_first + 20 {
                t += 0.05;
                let mut r = reading(t, &start);
                if i >= recognised_first {
                    doubtful(&mut r);
                }
                tracker.push(&r, &mut out);
            }
            tracker.finish(&mut out);
            out.iter().filter(|e| e.action == Action::Knock(Square::D1)).count()
        };
        // Read clearly, then no longer like itself: displaced.
        assert_eq!(run(5), 1);
        // Never read clearly from the first reading on: a piece whose look the model does not
        // know, not a knock.
        assert_eq!(run(0), 0);
    }

    #[test]
    fn hands_get_ids_from_their_arms_and_keep_them() {
        let mut tracker = Tracker::new(Board::default(), Options::default());
        let mut out = Vec::new();
        let board = Board::default();
        // White's right hand: its arm crosses the bottom edge on the h-file side.
        let mut r = reading(0.05, &board);
        arm(&mut r.hands.white, 40, 30..=53);
        tracker.push(&r, &mut out);
        assert_eq!(ids(&tracker), ["w1"]);
        // It moves a little and the left hand comes in from the a-file side; Black's right
        // hand comes from the top edge on the a-file side (Black's right).
        let mut r = reading(0.10, &board);
        arm(&mut r.hands.white, 41, 28..=53);
        arm(&mut r.hands.white, 12, 35..=53);
        arm(&mut r.hands.black, 10, 0..=15);
        tracker.push(&r, &mut out);
        assert_eq!(ids(&tracker), ["b1", "w1", "w2"]);
        let w1 = tracker.hands().iter().find(|tr| tr.hand == Hand { side: Color::White, number: 1 }).unwrap();
        assert!(w1.cells.contains(&(28, 41)) && w1.over_board);
        // Noise below the threshold is no hand.
        let mut r = reading(0.15, &board);
        r.hands.black.iter_mut().for_each(|v| *v = 0.3);
        tracker.push(&r, &mut out);
        tracker.push(&reading(0.5, &board), &mut out);
        assert!(tracker.hands().is_empty());
        assert!(out.is_empty(), "{out:?}");
    }

    #[test]
    fn a_new_hand_with_no_arm_seen_came_over_the_nearest_edge() {
        // A palm whose arm the model lost, up one column of cells in one side's map (the
        // model's colour split is weakest far from the player's edge), with `expected` to act.
        let palm = |white_map: bool, col: usize, rows: std::ops::RangeInclusive<usize>, expected: Color| {
            let board = Board::default();
            let mut tracker = Tracker::new(board.clone(), Options::default());
            tracker.expect(expected);
            let mut r = reading(0.05, &board);
            arm(if white_map { &mut r.hands.white } else { &mut r.hands.black }, col, rows);
            tracker.push(&r, &mut Vec::new());
            ids(&tracker)
        };
        // Near the a-file: the player expected to act.
        assert_eq!(palm(true, 5, 20..=30, Color::Black), ["b1"]);
        // Near Black's edge, Black's whoever is expected; near White's, White's.
        assert_eq!(palm(true, 27, 4..=12, Color::White), ["b1"]);
        assert_eq!(palm(false, 27, 40..=49, Color::Black), ["w1"]);
        // In the middle of the board, the stronger map.
        assert_eq!(palm(true, 27, 22..=31, Color::Black), ["w1"]);
    }

    #[test]
    fn a_palm_cut_off_its_arm_is_the_same_hand_and_an_arm_of_its_own_is_another() {
        let board = Board::default();
        let mut tracker = Tracker::new(board.clone(), Options::default());
        let mut out = Vec::new();
        let mut r = reading(0.05, &board);
        arm(&mut r.hands.white, 40, 30..=53);
        tracker.push(&r, &mut out);
        // The model loses the wrist: the palm, 8 cells beyond the arm's end, has no arm.
        let mut r = reading(0.10, &board);
        arm(&mut r.hands.white, 40, 30..=53);
        arm(&mut r.hands.white, 40, 17..=21);
        tracker.push(&r, &mut out);
        assert_eq!(ids(&tracker), ["w1"]);
        assert!(tracker.hands()[0].cells.contains(&(17, 40)), "the palm joined the hand");
        // A blob as far off with an arm across White's edge is White's other hand.
        let mut r = reading(0.15, &board);
        arm(&mut r.hands.white, 40, 30..=53);
        arm(&mut r.hands.white, 30, 40..=53);
        tracker.push(&r, &mut out);
        assert_eq!(ids(&tracker), ["w1", "w2"]);
    }

    /// The start position, the g1 knight lifted, and set down on f3.
    fn knight_to_f3() -> [Board; 3] {
        let start = Board::default();
        let mut lifted = start.clone();
        lifted.discard_piece_at(Square::G1);
        let mut after = lifted.clone();
        after.set_piece_at(Square::F3, Piece::from_char('N').unwrap());
        [start, lifted, after]
    }

    #[test]
    fn a_lift_and_release_by_one_hand_is_a_move_of_that_hand() {
        let [start, lifted, after] = knight_to_f3();
        let mut tracker = Tracker::new(start.clone(), Options::default());
        let mut out = Vec::new();
        let mut t = 0.0;
        for (board, hand) in [(&start, true), (&lifted, true), (&after, true), (&after, false), (&after, false)] {
            feed(&mut tracker, &mut t, board, hand, 4, &mut out);
        }
        tracker.finish(&mut out);
        let got: Vec<(String, &str, Option<Square>)> = out.iter().map(|e| (e.hand.to_string(), e.action.name(), e.action.square())).collect();
        assert_eq!(got, [("w1".to_string(), "lift", Some(Square::G1)), ("w1".to_string(), "release", Some(Square::F3))]);
        assert!(out.windows(2).all(|w| w[0].t <= w[1].t));
    }

    #[test]
    fn a_lift_is_dated_from_the_grasp_through_the_frames_the_gate_passed_over() {
        let [start, lifted, _] = knight_to_f3();
        let mut tracker = Tracker::new(start.clone(), Options::default());
        let mut out = Vec::new();
        // At 20 frames a second, `frame` readings: the hand comes to the knight, grasps it
        // (frames 5 and 6) and holds still, so the gate reads no frame until the 13th. The hand
        // holding the knight is still over g1 then, and the square reads the knight, uncovered,
        // once; then empty.
        let readings = [(1, &start, 0.0, 0.0), (2, &start, 0.0, 0.0), (3, &start, 0.0, 0.0), (4, &start, 0.0, 0.0), (5, &start, 0.9, 0.5), (6, &start, 0.9, 0.5), (13, &start, 0.2, 0.0)]
            .into_iter()
            .chain((14..20).map(|frame| (frame, &lifted, 0.0, 0.0)));
        for (frame, board, contact, cover) in readings {
            let mut r = reading(frame as f64 * 0.05, board);
            r.frame = frame;
            arm(&mut r.hands.white, 39, 27..=53);
            r.squares[Square::G1 as usize].contact = contact;
            r.squares[Square::G1 as usize].cover = cover;
            tracker.push(&r, &mut out);
        }
        tracker.finish(&mut out);
        let lift = out.iter().find(|e| e.action == Action::Lift(Square::G1)).expect("the lift");
        // The grasp lasted to frame 12 (0.60 s); the knight left LIFT_LEAD_S before it, not at
        // the first reading of g1 empty (0.70 s) after the lone reading of it in the hand.
        assert!((lift.t - (0.60 - squares::LIFT_LEAD_S)).abs() < 1e-9, "{lift:?}");
    }

    #[test]
    fn a_piece_set_down_is_dated_by_the_contact_of_every_frame_the_frames_the_gate_passed_over_included() {
        let [start, lifted, after] = knight_to_f3();
        let mut tracker = Tracker::new(start.clone(), Options::default());
        let mut out = Vec::new();
        // (frame, board, arm over f3, contact on f3): the hand sets the knight down at frame 9
        // and holds still on it to frame 19, which the gate passes over; at frame 20 the
        // fingers are leaving it, and from frame 21 the hand is gone.
        let readings = (1..5)
            .map(|frame| (frame, &start, true, 0.0))
            .chain((5..9).map(|frame| (frame, &lifted, true, 0.0)))
            .chain([(9, &lifted, true, 0.9), (20, &lifted, true, 0.1)])
            .chain((21..27).map(|frame| (frame, &after, false, 0.0)));
        for (frame, board, hand, contact) in readings {
            let mut r = reading(frame as f64 * 0.05, board);
            r.frame = frame;
            if hand {
                arm(&mut r.hands.white, 33, 27..=53);
                r.squares[Square::F3 as usize].cover = 0.9;
            }
            r.squares[Square::F3 as usize].contact = contact;
            tracker.push(&r, &mut out);
        }
        tracker.finish(&mut out);
        let release = out.iter().find(|e| e.action == Action::Release(Square::F3)).expect("the release");
        // The weighted mean over frames 9 to 20: eleven frames at 0.9 (0.45 s, then 0.50 to
        // 0.95 s, mean 0.725 s), one at 0.1 (1.0 s). Counting the readings alone would give
        // 0.505 s, the fingers' first moment on it.
        let mean = (0.9 * 0.45 + 0.9 * 10.0 * 0.725 + 0.1 * 1.0) / (0.9 * 11.0 + 0.1);
        assert!((release.t - mean).abs() < 1e-9, "{release:?}, not {mean}");
    }

    /// The knight g1-f3, set down with the arm over f3 through `stages`, each (whether the
    /// readings see the knight on f3 yet, the contact read there, how many readings, whether
    /// the hand covers f3), then the hand gone. The events, and the span of time of each stage.
    fn knight_set_down(stages: &[(bool, f32, usize, bool)]) -> (Vec<Event>, Vec<(f64, f64)>) {
        let [start, lifted, after] = knight_to_f3();
        let mut tracker = Tracker::new(start.clone(), Options::default());
        let mut out = Vec::new();
        let mut t = 0.0;
        feed(&mut tracker, &mut t, &start, true, 4, &mut out);
        feed(&mut tracker, &mut t, &lifted, true, 4, &mut out);
        let mut spans = Vec::new();
        for &(seen, contact, n, covered) in stages {
            feed_edited(&mut tracker, &mut t, if seen { &after } else { &lifted }, n, &mut out, |r| {
                arm(&mut r.hands.white, 33, 27..=53);
                if covered {
                    r.squares[Square::F3 as usize].cover = 0.9;
                }
                r.squares[Square::F3 as usize].contact = contact;
            });
            spans.push((t - 0.05 * (n as f64 - 1.0), t));
        }
        feed(&mut tracker, &mut t, &after, false, 6, &mut out);
        tracker.finish(&mut out);
        (out, spans)
    }

    #[test]
    fn a_piece_set_down_under_a_hovering_hand_is_let_go_while_the_fingers_were_on_it() {
        // The knight goes g1-f3; the hand covers f3 while it arrives (little contact), sets the
        // knight down (the fingers on it, contact read at 0.3: a hand over a piece reads weak
        // contact), then hovers and withdraws (weaker) before the readings see the knight. Let
        // go in the middle stretch, not when the hand withdrew.
        let (out, spans) = knight_set_down(&[(false, 0.05, 4, true), (false, 0.3, 4, true), (false, 0.1, 8, true)]);
        let down = spans[1];
        let release = out.iter().find(|e| e.action == Action::Release(Square::F3)).unwrap_or_else(|| panic!("{out:?}"));
        assert!(release.t >= down.0 - 0.1 && release.t <= down.1 + 0.1, "let go at {:.2}, fingers on it {:.2}-{:.2}: {out:?}", release.t, down.0, down.1);
    }

    #[test]
    fn a_piece_seen_on_its_square_while_the_fingers_still_hold_it_is_let_go_later() {
        // From above, a knight held by its top is seen on f3 before it is let go: three
        // readings show it there with the hand at it and little contact, six more with the
        // fingers on it, then the hand goes. Let go among the six, not at the first sight.
        let (out, spans) = knight_set_down(&[(true, 0.05, 3, false), (true, 0.6, 6, false)]);
        let (seen, held) = (spans[0].0, spans[1]);
        let release = out.iter().find(|e| e.action == Action::Release(Square::F3)).unwrap_or_else(|| panic!("{out:?}"));
        assert!(release.t > seen + 0.1 && release.t >= held.0 - 0.1 && release.t <= held.1, "let go at {:.2}, seen at {seen:.2}, held {:.2}-{:.2}: {out:?}", release.t, held.0, held.1);
        assert!(out.windows(2).all(|w| w[0].t <= w[1].t), "{out:?}");
    }

    #[test]
    fn a_piece_read_gone_beside_the_one_that_moves_never_left() {
        // White plays Nf3; beside the arm, the pawn on h2 reads as gone from the lift on and is
        // never read back (a shadow): a pawn cannot reach f3, the knight can, so the pawn stayed.
        let start = Board::default();
        let lifted = without(&start, &[Square::G1, Square::H2]);
        let mut after = lifted.clone();
        after.set_piece_at(Square::F3, Piece::from_char('N').unwrap());
        let out = play(&start, &[(&start, G_FILE), (&lifted, G_FILE), (&after, G_FILE), (&after, None)]);
        assert_eq!(actions(&out), [("lift", Some(Square::G1)), ("release", Some(Square::F3))]);
        // The knight put back where it stood: the pawn, which cannot go there, still never left.
        let back = without(&start, &[Square::H2]);
        let out = play(&start, &[(&start, G_FILE), (&lifted, G_FILE), (&back, G_FILE), (&back, None)]);
        assert_eq!(actions(&out), [("lift", Some(Square::G1)), ("release", Some(Square::G1))]);
        // Castling: the king and the rook both leave, and both are lifts.
        let cleared = without(&start, &[Square::F1, Square::G1]);
        let lifted = without(&cleared, &[Square::E1, Square::H1]);
        let mut castled = lifted.clone();
        castled.set_piece_at(Square::G1, Piece::from_char('K').unwrap());
        castled.set_piece_at(Square::F1, Piece::from_char('R').unwrap());
        let out = play(&cleared, &[(&cleared, G_FILE), (&lifted, G_FILE), (&castled, G_FILE), (&castled, None)]);
        let lifts: Vec<Square> = out.iter().filter_map(|e| match e.action { Action::Lift(sq) => Some(sq), _ => None }).collect();
        assert_eq!(lifts, [Square::E1, Square::H1], "{out:?}");
    }

    #[test]
    fn pieces_come_onto_the_board_only_as_promotion_pieces() {
        // White's hand over g3, read as a knight there while no hand holds one: nothing happened.
        let start = Board::default();
        let mut phantom = start.clone();
        phantom.set_piece_at(Square::G3, Piece::from_char('N').unwrap());
        let out = play(&start, &[(&start, G_FILE), (&phantom, G_FILE), (&start, G_FILE), (&start, None)]);
        assert!(out.is_empty(), "{out:?}");
        // A queen set on the last rank with no piece in hand, beside a pawn that can promote, is
        // a promotion piece put down (the readings see it before the pawn gone).
        let start = board_of("8/4P1k1/8/8/8/8/6K1/8");
        let mut promoted = start.clone();
        promoted.set_piece_at(Square::F8, Piece::from_char('Q').unwrap());
        let mut tracker = Tracker::new(start.clone(), Options::default());
        let (mut out, mut t) = (Vec::new(), 0.0);
        for board in [&start, &promoted, &promoted] {
            feed_arm(&mut tracker, &mut t, board, Some((36, 4)), &[], 6, &mut out);
        }
        feed_arm(&mut tracker, &mut t, &promoted, None, &[], 6, &mut out);
        tracker.finish(&mut out);
        assert_eq!(actions(&out), [("place", Some(Square::F8))]);
        // Two files from the pawn, a misread.
        let mut far = start.clone();
        far.set_piece_at(Square::C8, Piece::from_char('Q').unwrap());
        let mut tracker = Tracker::new(start.clone(), Options::default());
        let (mut out, mut t) = (Vec::new(), 0.0);
        for (board, arm_at) in [(&start, Some((21, 4))), (&far, Some((21, 4))), (&far, Some((21, 4))), (&far, None)] {
            feed_arm(&mut tracker, &mut t, board, arm_at, &[], 6, &mut out);
        }
        tracker.finish(&mut out);
        assert!(out.is_empty(), "{out:?}");
    }

    #[test]
    fn a_held_piece_is_not_set_down_where_it_cannot_go_under_the_other_players_hand() {
        // Black's king leaves g7 for h6; meanwhile White's hand rests on b3 and is read as a
        // black piece there. The king cannot reach b3, and no Black hand is there: a misread.
        let start = board_of("8/6k1/8/8/8/8/6K1/8");
        let lifted = without(&start, &[Square::G7]);
        let mut misread = lifted.clone();
        misread.set_piece_at(Square::B3, Piece::from_char('k').unwrap());
        let mut arrived = misread.clone();
        arrived.set_piece_at(Square::H6, Piece::from_char('k').unwrap());
        let mut tracker = Tracker::new(start.clone(), Options::default());
        let (mut out, mut t) = (Vec::new(), 0.0);
        for (board, hands) in [(&start, true), (&lifted, true), (&misread, true), (&arrived, true), (&arrived, false)] {
            feed_edited(&mut tracker, &mut t, board, 6, &mut out, |r| {
                if hands {
                    arm(&mut r.hands.black, 45, 0..=16);
                    arm(&mut r.hands.white, 9, 33..=53);
                }
            });
        }
        tracker.finish(&mut out);
        assert_eq!(actions(&out), [("lift", Some(Square::G7)), ("release", Some(Square::H6))]);
    }

    #[test]
    fn a_piece_set_down_where_no_hand_is_seen_is_the_held_piece_that_could_go_there() {
        // The model sees White's hand only over the b-file while the knight goes g1-f3.
        let start = Board::default();
        let lifted = without(&start, &[Square::G1]);
        let mut after = lifted.clone();
        after.set_piece_at(Square::F3, Piece::from_char('N').unwrap());
        // A pawn appearing on e4 meanwhile is no piece in hand: none held could go there.
        let mut misread = after.clone();
        misread.set_piece_at(Square::E4, Piece::from_char('P').unwrap());
        let b_file = Some((12, 30));
        let out = play(&start, &[(&start, b_file), (&lifted, b_file), (&lifted, b_file), (&after, b_file), (&misread, b_file), (&misread, None)]);
        let got: Vec<(String, &str, Option<Square>)> = out.iter().map(|e| (e.hand.to_string(), e.action.name(), e.action.square())).collect();
        assert_eq!(got, [("w2".to_string(), "lift", Some(Square::G1)), ("w2".to_string(), "release", Some(Square::F3))]);
        // Inferred, not seen: a piece carried over a square may read as set down there, and
        // the engine leaves a ruling that hangs on it to the arbiter.
        assert_eq!(out[1].conf, Some(interpret::UNSEEN_CONF));
    }

    #[test]
    fn a_piece_leaving_with_no_hand_near_went_with_the_nearest_hand() {
        // White's left hand over the b-file; the knight on g1 leaves, no hand seen near it.
        let start = Board::default();
        let lifted = without(&start, &[Square::G1]);
        let mut tracker = Tracker::new(start.clone(), Options::default());
        let (mut out, mut t) = (Vec::new(), 0.0);
        feed_arm(&mut tracker, &mut t, &start, Some((12, 30)), &[], 4, &mut out);
        feed_arm(&mut tracker, &mut t, &lifted, Some((12, 30)), &[], 4, &mut out);
        tracker.finish(&mut out);
        let got: Vec<(String, &str)> = out.iter().map(|e| (e.hand.to_string(), e.action.name())).collect();
        assert_eq!(got, [("w2".to_string(), "lift")]);
    }

    /// Feeds `n` readings of `board`, 0.05 s apart, with White's arm over the g-file (g1 to g4)
    /// or no hand at all.
    fn feed(tracker: &mut Tracker, t: &mut f64, board: &Board, hand: bool, n: usize, out: &mut Vec<Event>) {
        feed_arm(tracker, t, board, G_FILE.filter(|_| hand), &[], n, out);
    }

    /// Feeds `n` readings of `board`, 0.05 s apart, with White's arm up column `arm.0` of the
    /// hand map from the bottom edge to row `arm.1` (or no hand), its fingers on `touched`.
    fn feed_arm(tracker: &mut Tracker, t: &mut f64, board: &Board, arm_at: Option<(usize, usize)>, touched: &[Square], n: usize, out: &mut Vec<Event>) {
        feed_edited(tracker, t, board, n, out, |r| {
            if let Some((col, top)) = arm_at {
                arm(&mut r.hands.white, col, top..=53);
            }
            for &sq in touched {
                r.squares[sq as usize].contact = 0.9;
            }
        });
    }

    /// Feeds `n` readings of `board`, 0.05 s apart, each changed by `edit` first.
    fn feed_edited(tracker: &mut Tracker, t: &mut f64, board: &Board, n: usize, out: &mut Vec<Event>, edit: impl Fn(&mut Reading)) {
        for _ in 0..n {
            *t += 0.05;
            let mut r = reading(*t, board);
            edit(&mut r);
            tracker.push(&r, out);
        }
    }

    /// White's arm over the g-file, g1 to g4 (see `feed_arm`).
    const G_FILE: Option<(usize, usize)> = Some((39, 27));

    /// The events of a tracker started on `start` and fed six readings of each board in
    /// turn, with White's arm where it says (see `feed_arm`), or no hand.
    fn play(start: &Board, boards: &[(&Board, Option<(usize, usize)>)]) -> Vec<Event> {
        let mut tracker = Tracker::new(start.clone(), Options::default());
        let (mut out, mut t) = (Vec::new(), 0.0);
        for &(board, arm_at) in boards {
            feed_arm(&mut tracker, &mut t, board, arm_at, &[], 6, &mut out);
        }
        tracker.finish(&mut out);
        out
    }

    /// What each event did, and where.
    fn actions(events: &[Event]) -> Vec<(&'static str, Option<Square>)> {
        events.iter().map(|e| (e.action.name(), e.action.square())).collect()
    }

    /// The board of a FEN (its piece placement, or a whole FEN).
    fn board_of(fen: &str) -> Board {
        fen.parse::<shakmaty::fen::Fen>().unwrap().as_setup().board.clone()
    }

    /// `board` with `squares` emptied.
    fn without(board: &Board, squares: &[Square]) -> Board {
        let mut board = board.clone();
        for &sq in squares {
            board.discard_piece_at(sq);
        }
        board
    }

    /// The ids of the hands the tracker follows, sorted.
    fn ids(tracker: &Tracker) -> Vec<String> {
        let mut ids: Vec<String> = tracker.hands().iter().map(|tr| tr.hand.to_string()).collect();
        ids.sort();
        ids
    }

    #[test]
    fn a_held_piece_glimpsed_through_the_hand_was_set_down_there() {
        // After 1.e4 e5, White lifts the knight from g1; with the hand still over it, the
        // readings show it on f3 (unsure, the square partly covered) for `glimpse` readings;
        // f3 then reads empty, and the knight stands on e2 (or, with no empty f3 read between,
        // on f3, where it stays).
        let start = board_of("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2");
        let lifted = without(&start, &[Square::G1]);
        let knight = Piece::from_char('N').unwrap();
        let run = |glimpse: usize, to: Square| {
            let mut there = lifted.clone();
            there.set_piece_at(to, knight);
            let mut tracker = Tracker::new(start.clone(), Options::default());
            let (mut out, mut t) = (Vec::new(), 0.0);
            feed(&mut tracker, &mut t, &start, true, 6, &mut out);
            feed(&mut tracker, &mut t, &lifted, true, 6, &mut out);
            feed_edited(&mut tracker, &mut t, &lifted, glimpse, &mut out, |r| {
                arm(&mut r.hands.white, 39, 27..=53);
                let f3 = &mut r.squares[Square::F3 as usize];
                f3.classes = [0.0; CLASSES];
                f3.classes[0] = 0.4;
                f3.classes[piece_class(Some(knight))] = 0.6;
                f3.cover = 0.42;
            });
            if to == Square::E2 {
                feed(&mut tracker, &mut t, &lifted, true, 6, &mut out);
            }
            // The hand goes to e2 (the e-file), or stays over f3.
            let over = if to == Square::E2 { Some((27, 40)) } else { G_FILE };
            feed_arm(&mut tracker, &mut t, &there, over, &[], 6, &mut out);
            feed(&mut tracker, &mut t, &there, false, 6, &mut out);
            tracker.finish(&mut out);
            out
        };
        let out = run(6, Square::E2);
        assert_eq!(actions(&out), [("lift", Some(Square::G1)), ("release", Some(Square::F3)), ("lift", Some(Square::F3)), ("release", Some(Square::E2))]);
        // Unsure: the engine leaves a ruling on it to the arbiter.
        assert_eq!((out[1].conf, out[2].conf), (Some(0.5), Some(0.5)), "{out:?}");
        assert!(out.windows(2).all(|w| w[0].t <= w[1].t), "{out:?}");
        // A glimpse of 0.1 s is the piece in the hand passing over the square.
        assert_eq!(actions(&run(2, Square::E2)), [("lift", Some(Square::G1)), ("release", Some(Square::E2))]);
        // The knight glimpsed where it is then seen standing: one release, sure.
        let out = run(6, Square::F3);
        assert_eq!(actions(&out), [("lift", Some(Square::G1)), ("release", Some(Square::F3))]);
        assert_eq!(out[1].conf, Some(0.95));
    }

    #[test]
    fn a_piece_set_down_out_of_sight_is_found_where_the_readings_turned() {
        // After 1.e4 e5, White lifts the queen from d1 and sets it on h5, cut off at the
        // picture's edge: the readings there only turn a little from empty. Black then plays
        // Nc6, and White Qh4 (or, with `capture`, Qxf7: the queen on f7 reads half empty, half
        // a black pawn, the case of the real overhead clip). `rise` is the occupied probability
        // read on h5 once the queen is there. With `one_player`, the knight is moved by an arm
        // across White's edge (one person playing both sides, as in the real overhead clip):
        // the tracker gives that hand to White.
        let start = board_of("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2");
        let lifted = without(&start, &[Square::D1]);
        let b8_lifted = without(&lifted, &[Square::B8]);
        let mut c6 = b8_lifted.clone();
        c6.set_piece_at(Square::C6, Piece::from_char('n').unwrap());
        let run = |rise: f32, capture: bool, one_player: bool| {
            let mut tracker = Tracker::new(start.clone(), Options::default());
            let (mut out, mut t) = (Vec::new(), 0.0);
            // 1.5 s of the start, then the queen lifted by White's hand over d1.
            feed_arm(&mut tracker, &mut t, &start, None, &[], 30, &mut out);
            feed_arm(&mut tracker, &mut t, &start, Some((24, 44)), &[], 6, &mut out);
            feed_arm(&mut tracker, &mut t, &lifted, Some((24, 44)), &[], 6, &mut out);
            // The hand leaves the picture past h5, and comes back at once (the readings lose
            // it for a moment): it never left the board, holding the queen, as far as they tell.
            let with_rise = |tracker: &mut Tracker, t: &mut f64, board: &Board, black_arm: bool, out: &mut Vec<Event>| {
                feed_edited(tracker, t, board, 8, out, |r| {
                    r.squares[Square::H5 as usize].classes[0] = 1.0 - rise;
                    r.squares[Square::H5 as usize].classes[piece_class(Piece::from_char('Q'))] = rise;
                    arm(&mut r.hands.white, 51, 27..=53);
                    match (black_arm, one_player) {
                        (true, false) => arm(&mut r.hands.black, 12, 0..=8),
                        (true, true) => arm(&mut r.hands.white, 12, 4..=53),
                        (false, _) => {}
                    }
                });
            };
            with_rise(&mut tracker, &mut t, &lifted, false, &mut out);
            // Black's hand lifts the knight from b8 and sets it on c6.
            with_rise(&mut tracker, &mut t, &lifted, true, &mut out);
            with_rise(&mut tracker, &mut t, &b8_lifted, true, &mut out);
            with_rise(&mut tracker, &mut t, &c6, true, &mut out);
            with_rise(&mut tracker, &mut t, &c6, false, &mut out);
            if capture {
                // White's hand, up the f-file, takes the f7 pawn off; the queen set there reads
                // as much empty as a pawn, and the hand leaves with the pawn.
                let f7_lifted = without(&c6, &[Square::F7]);
                feed_arm(&mut tracker, &mut t, &c6, Some((36, 10)), &[], 6, &mut out);
                feed_arm(&mut tracker, &mut t, &f7_lifted, Some((36, 10)), &[], 6, &mut out);
                for arm_at in [Some((36, 10)), None, None] {
                    feed_edited(&mut tracker, &mut t, &f7_lifted, 6, &mut out, |r| {
                        let f7 = &mut r.squares[Square::F7 as usize];
                        f7.classes = [0.0; CLASSES];
                        f7.classes[0] = 0.43;
                        f7.classes[piece_class(Piece::from_char('p'))] = 0.36;
                        f7.classes[piece_class(Piece::from_char('Q'))] = 0.21;
                        if let Some((col, top)) = arm_at {
                            arm(&mut r.hands.white, col, top..=53);
                        }
                    });
                }
                tracker.finish(&mut out);
                return out;
            }
            // White's queen comes back into view on h4: from h5, the only piece that could go.
            let mut h4 = c6.clone();
            h4.set_piece_at(Square::H4, Piece::from_char('Q').unwrap());
            for board in [&c6, &h4, &h4] {
                feed_arm(&mut tracker, &mut t, board, Some((51, 27)), &[], 6, &mut out);
            }
            feed_arm(&mut tracker, &mut t, &h4, None, &[], 6, &mut out);
            tracker.finish(&mut out);
            out
        };
        let out = run(0.1, false, false);
        let got: Vec<(String, &str, Option<Square>)> = out.iter().map(|e| (e.hand.to_string(), e.action.name(), e.action.square())).collect();
        let want = [
            ("w2", "lift", Some(Square::D1)),
            ("w2", "release", Some(Square::H5)),
            ("b1", "lift", Some(Square::B8)),
            ("b1", "release", Some(Square::C6)),
            ("w1", "lift", Some(Square::H5)),
            ("w1", "release", Some(Square::H4)),
        ];
        assert_eq!(got, want.map(|(h, a, sq)| (h.to_string(), a, sq)), "{out:?}");
        assert_eq!(out[1].conf, Some(interpret::UNSEEN_CONF));
        // Readings that never turned: the queen stays in the hand, nowhere to put it.
        let out = run(0.0, false, false);
        assert_eq!(actions(&out)[..3], [("lift", Some(Square::D1)), ("lift", Some(Square::B8)), ("release", Some(Square::C6))], "{out:?}");
        // The pawn on f7 leaves in a hand, and f7 then reads occupied as much as not: the queen,
        // out of sight on h5 and the only piece that could go there, took it.
        let out = run(0.1, true, false);
        assert_eq!(actions(&out)[4..], [("remove", Some(Square::F7)), ("lift", Some(Square::H5)), ("release", Some(Square::F7))], "{out:?}");
        // The knight lifted by a hand taken for White's: the queen, which could not take it,
        // was set down before; not still in hand, to be put aside when its hand leaves. (That
        // hand takes the knight off the board and puts it on c6, as the readings tell it; the
        // game decoder says which move was made.)
        let out = run(0.1, false, true);
        assert_eq!(actions(&out)[..4], [("lift", Some(Square::D1)), ("release", Some(Square::H5)), ("remove", Some(Square::B8)), ("place", Some(Square::C6))], "{out:?}");
        assert_eq!(out[1].conf, Some(interpret::UNSEEN_CONF));
    }

    #[test]
    fn a_lifted_piece_back_on_its_square_in_the_other_colour_is_put_back() {
        // After 1.e4, Black's arm comes down the e-file; the readings lose the a7 pawn for 0.6 s
        // and give it back as a white pawn (a dark wooden set, blurred), where no hand is;
        // Black plays e5.
        let start = board_of("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
        let a7_lost = without(&start, &[Square::A7]);
        let mut a7_white = start.clone();
        a7_white.set_piece_at(Square::A7, Piece::from_char('P').unwrap());
        let e7_lifted = without(&a7_white, &[Square::E7]);
        let mut e5 = e7_lifted.clone();
        e5.set_piece_at(Square::E5, Piece::from_char('p').unwrap());
        let mut tracker = Tracker::new(start.clone(), Options::default());
        tracker.expect(Color::Black);
        let (mut out, mut t) = (Vec::new(), 0.0);
        for (board, arm_over) in [(&start, false), (&start, true), (&a7_lost, true), (&a7_lost, true), (&a7_white, true), (&e7_lifted, true), (&e5, true), (&e5, false)] {
            feed_edited(&mut tracker, &mut t, board, 6, &mut out, |r| {
                if arm_over {
                    arm(&mut r.hands.black, 30, 0..=26);
                }
            });
        }
        tracker.finish(&mut out);
        let want = [("lift", Some(Square::A7)), ("release", Some(Square::A7)), ("lift", Some(Square::E7)), ("release", Some(Square::E5))];
        assert_eq!(actions(&out), want, "{out:?}");
        assert!(out.iter().all(|e| e.hand.side == Color::Black), "{out:?}");
    }

    #[test]
    fn a_piece_read_in_the_other_colour_where_no_held_piece_could_take_it_never_changed() {
        // White lifts the queen; meanwhile the knight on b8 reads as a white knight (a small,
        // blurred picture), with no hand there. The queen could not take it from d1: a misread,
        // not the queen set down (nor a promotion piece: no white pawn is about to promote).
        let start = board_of("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2");
        let lifted = without(&start, &[Square::D1]);
        let mut misread = lifted.clone();
        misread.set_piece_at(Square::B8, Piece::from_char('N').unwrap());
        let mut h5 = lifted.clone();
        h5.set_piece_at(Square::H5, Piece::from_char('Q').unwrap());
        let mut tracker = Tracker::new(start.clone(), Options::default());
        let (mut out, mut t) = (Vec::new(), 0.0);
        let d_file = Some((24, 44));
        for (board, arm_at) in [(&start, None), (&start, d_file), (&lifted, d_file), (&misread, d_file), (&lifted, d_file), (&h5, d_file), (&h5, None)] {
            feed_arm(&mut tracker, &mut t, board, arm_at, &[], 6, &mut out);
        }
        tracker.finish(&mut out);
        assert_eq!(actions(&out), [("lift", Some(Square::D1)), ("release", Some(Square::H5))], "{out:?}");
    }

    #[test]
    fn a_held_piece_is_set_down_before_its_player_lifts_another() {
        // White lifts the queen and sets it on h5, cut off at the picture's edge (its readings
        // turn a little), then lifts the bishop on f1: one piece at a time, so the queen was
        // set down first.
        let start = board_of("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 2 3");
        let lifted = without(&start, &[Square::D1]);
        let f1_lifted = without(&lifted, &[Square::F1]);
        let mut tracker = Tracker::new(start.clone(), Options::default());
        let (mut out, mut t) = (Vec::new(), 0.0);
        feed_arm(&mut tracker, &mut t, &start, None, &[], 30, &mut out);
        feed_arm(&mut tracker, &mut t, &start, Some((24, 44)), &[], 6, &mut out);
        feed_arm(&mut tracker, &mut t, &lifted, Some((24, 44)), &[], 6, &mut out);
        for (board, arm_at) in [(&lifted, Some((51, 27))), (&lifted, Some((36, 44))), (&f1_lifted, Some((36, 44)))] {
            feed_edited(&mut tracker, &mut t, board, 8, &mut out, |r| {
                r.squares[Square::H5 as usize].classes[0] = 0.9;
                r.squares[Square::H5 as usize].classes[piece_class(Piece::from_char('Q'))] = 0.1;
                if let Some((col, top)) = arm_at {
                    arm(&mut r.hands.white, col, top..=53);
                }
            });
        }
        tracker.finish(&mut out);
        assert_eq!(actions(&out)[..3], [("lift", Some(Square::D1)), ("release", Some(Square::H5)), ("lift", Some(Square::F1))], "{out:?}");
    }

    #[test]
    fn an_unsure_square_no_hand_came_near_does_not_hold_the_events_back() {
        // a7 reads half empty, half a pawn, from the start and all along; White plays Nf3.
        let start = Board::default();
        let lifted = without(&start, &[Square::G1]);
        let mut after = lifted.clone();
        after.set_piece_at(Square::F3, Piece::from_char('N').unwrap());
        let mut tracker = Tracker::new(start.clone(), Options::default());
        let (mut out, mut t) = (Vec::new(), 0.0);
        for (board, arm_at) in [(&start, G_FILE), (&lifted, G_FILE), (&after, G_FILE), (&after, None), (&after, None)] {
            feed_edited(&mut tracker, &mut t, board, 6, &mut out, |r| {
                r.squares[Square::A7 as usize].classes[0] = 0.45;
                r.squares[Square::A7 as usize].classes[piece_class(Piece::from_char('p'))] = 0.45;
                if let Some((col, top)) = arm_at {
                    arm(&mut r.hands.white, col, top..=53);
                }
            });
        }
        // Out before the input ends: a change on a7, if one came, would be dated at a reading
        // still to come, since no hand dates it back.
        assert_eq!(actions(&out), [("lift", Some(Square::G1)), ("release", Some(Square::F3))]);
    }

    #[test]
    fn pieces_that_change_colour_or_appear_with_no_hand_about_are_misreads() {
        let start = Board::default();
        let mut tracker = Tracker::new(start.clone(), Options::default());
        let mut out = Vec::new();
        let mut t = 0.0;
        // The knight on g1 read as Black's, and a White pawn on e4, for a second: no hand held a
        // black piece, and none came near e4.
        let mut misread = start.clone();
        misread.set_piece_at(Square::G1, Piece::from_char('n').unwrap());
        misread.set_piece_at(Square::E4, Piece::from_char('P').unwrap());
        feed(&mut tracker, &mut t, &misread, false, 20, &mut out);
        feed(&mut tracker, &mut t, &start, false, 10, &mut out);
        tracker.finish(&mut out);
        assert!(out.is_empty(), "{out:?}");
    }

    #[test]
    fn a_held_piece_landing_in_the_other_colour_is_released_not_placed() {
        let start = Board::default();
        let mut lifted = start.clone();
        lifted.discard_piece_at(Square::G1);
        // The knight lands on g3 and the model reads it as Black's.
        let mut landed = lifted.clone();
        landed.set_piece_at(Square::G3, Piece::from_char('n').unwrap());
        let mut tracker = Tracker::new(start.clone(), Options::default());
        let mut out = Vec::new();
        let mut t = 0.0;
        feed(&mut tracker, &mut t, &start, true, 4, &mut out);
        feed(&mut tracker, &mut t, &lifted, true, 8, &mut out);
        feed(&mut tracker, &mut t, &landed, true, 4, &mut out);
        feed(&mut tracker, &mut t, &landed, false, 4, &mut out);
        tracker.finish(&mut out);
        assert_eq!(actions(&out), [("lift", Some(Square::G1)), ("release", Some(Square::G3))]);
    }

    #[test]
    fn a_piece_back_on_its_square_at_once_never_left() {
        // The knight on g1 read gone for 0.2 s (four readings), then back: no hand lifts and
        // sets down a piece that fast; an arm passing over it is read so. Also where it first
        // read Black's for a moment (a misread in place: no hand holds a black piece) while the
        // arm hides g3, so that the misread still waits to be read when the knight reads gone.
        let start = Board::default();
        let mut black = start.clone();
        black.set_piece_at(Square::G1, Piece::from_char('n').unwrap());
        let gone = without(&start, &[Square::G1]);
        for misread in [false, true] {
            let mut tracker = Tracker::new(start.clone(), Options::default());
            let (mut out, mut t) = (Vec::new(), 0.0);
            feed(&mut tracker, &mut t, &start, true, 4, &mut out);
            let boards = if misread { vec![&black, &gone, &start] } else { vec![&gone, &start] };
            for board in boards {
                feed_edited(&mut tracker, &mut t, board, 4, &mut out, |r| {
                    arm(&mut r.hands.white, 39, 27..=53);
                    if misread {
                        r.squares[Square::G3 as usize].cover = 0.9;
                    }
                });
            }
            feed(&mut tracker, &mut t, &start, false, 4, &mut out);
            tracker.finish(&mut out);
            assert_eq!(out, [], "misread first: {misread}");
        }
    }

    #[test]
    fn a_piece_back_on_its_square_soon_is_a_doubtful_release() {
        let start = Board::default();
        let mut lifted = start.clone();
        lifted.discard_piece_at(Square::G1);
        for (gone, conf) in [(8, 0.5), (16, 0.95)] {
            let mut tracker = Tracker::new(start.clone(), Options::default());
            let mut out = Vec::new();
            let mut t = 0.0;
            feed(&mut tracker, &mut t, &start, true, 4, &mut out);
            feed(&mut tracker, &mut t, &lifted, true, gone, &mut out);
            feed(&mut tracker, &mut t, &start, true, 4, &mut out);
            feed(&mut tracker, &mut t, &start, false, 4, &mut out);
            tracker.finish(&mut out);
            let got: Vec<(&str, Option<Square>, f32)> = out.iter().map(|e| (e.action.name(), e.action.square(), e.conf.unwrap_or(1.0))).collect();
            assert_eq!(got, [("lift", Some(Square::G1), 0.95), ("release", Some(Square::G1), conf)], "gone for {gone} readings");
        }
    }

    #[test]
    fn a_piece_back_on_its_square_after_its_player_moved_another_is_a_doubtful_release() {
        // The king on e1 reads gone in the arm's shadow for four seconds, longer than the
        // readings are waited for; meanwhile the hand plays Ng1-f3, or nothing; then the king
        // reads back.
        let start = Board::default();
        let king_gone = without(&start, &[Square::E1]);
        let lifted = without(&king_gone, &[Square::G1]);
        let mut after = lifted.clone();
        after.set_piece_at(Square::F3, Piece::from_char('N').unwrap());
        let mut back = after.clone();
        back.set_piece_at(Square::E1, Piece::from_char('K').unwrap());
        for (knight_moves, conf) in [(true, 0.5), (false, 0.95)] {
            let mut tracker = Tracker::new(start.clone(), Options::default());
            let (mut out, mut t) = (Vec::new(), 0.0);
            feed(&mut tracker, &mut t, &start, true, 6, &mut out);
            feed(&mut tracker, &mut t, &king_gone, true, 80, &mut out);
            let (moved, with_king) = if knight_moves { (&after, &back) } else { (&king_gone, &start) };
            if knight_moves {
                feed(&mut tracker, &mut t, &lifted, true, 6, &mut out);
            }
            feed(&mut tracker, &mut t, moved, true, 6, &mut out);
            feed(&mut tracker, &mut t, with_king, true, 6, &mut out);
            feed(&mut tracker, &mut t, with_king, false, 6, &mut out);
            tracker.finish(&mut out);
            let back_on_e1 = out.iter().find(|e| e.action == Action::Release(Square::E1)).unwrap_or_else(|| panic!("{out:?}"));
            assert_eq!(back_on_e1.conf, Some(conf), "knight moved: {knight_moves}; {out:?}");
        }
    }

    /// Each event as its name, the piece placed and the square: "place Q e8".
    fn events(out: &[Event]) -> Vec<String> {
        out.iter()
            .map(|e| {
                let piece = match e.action {
                    Action::Place { piece, .. } => format!(" {}", piece.char()),
                    _ => String::new(),
                };
                let sq = e.action.square().map(|sq| format!(" {sq}")).unwrap_or_default();
                format!("{}{piece}{sq}", e.action.name())
            })
            .collect()
    }

    #[test]
    fn a_pawn_set_on_the_last_rank_waits_for_its_exchange() {
        let board = board_of;
        let start = board("8/4P1k1/8/8/8/8/6K1/8");
        let lifted = board("8/6k1/8/8/8/8/6K1/8");
        // The model never saw a pawn on the last rank: it reads the pawn set on e8 as a queen.
        let on_e8 = board("4Q3/6k1/8/8/8/8/6K1/8");

        // White's arm up the e-file to e8, or no hand: each phase's board, hand and readings.
        let play = |phases: &[(&Board, bool, usize)]| {
            let mut tracker = Tracker::new(start.clone(), Options::default());
            let (mut out, mut t) = (Vec::new(), 0.0);
            for &(board, hand, n) in phases {
                feed_arm(&mut tracker, &mut t, board, hand.then_some((29, 5)), &[], n, &mut out);
            }
            tracker.finish(&mut out);
            out
        };

        // The pawn is set down, lifted off again, and a queen put in its place (the hand away
        // two seconds, fetching it).
        let out = play(&[(&start, true, 4), (&lifted, true, 8), (&on_e8, true, 8), (&lifted, true, 8), (&lifted, false, 40), (&on_e8, true, 8), (&on_e8, false, 8)]);
        assert_eq!(events(&out), ["lift e7", "release e8", "lift e8", "remove", "place Q e8"]);

        // The pawn is exchanged in the hand: what the hand set down was the queen.
        let out = play(&[(&start, true, 4), (&lifted, true, 8), (&on_e8, true, 8), (&on_e8, false, 8)]);
        assert_eq!(events(&out), ["lift e7", "release e8", "remove e8", "place Q e8"]);
        assert!(out.iter().all(|e| e.hand.to_string() == "w1"), "{out:?}");
    }

    #[test]
    fn a_palm_reaching_the_far_rank_stays_its_players() {
        let board = Board::default();
        let mut tracker = Tracker::new(board.clone(), Options::default());
        let mut out = Vec::new();
        let mut r = reading(0.05, &board);
        arm(&mut r.hands.white, 29, 6..=53);
        tracker.push(&r, &mut out);
        // The palm reaches over e8 into Black's margin and the model loses the arm.
        let mut r = reading(0.10, &board);
        arm(&mut r.hands.white, 29, 1..=10);
        tracker.push(&r, &mut out);
        assert_eq!(ids(&tracker), ["w1"]);
    }

    #[test]
    fn a_hand_resting_by_the_edge_comes_back_as_itself() {
        let board = Board::default();
        let mut tracker = Tracker::new(board.clone(), Options::default());
        let mut out = Vec::new();
        // White's left hand over the board, then drawn back into the margin.
        let mut r = reading(0.05, &board);
        arm(&mut r.hands.white, 12, 35..=53);
        tracker.push(&r, &mut out);
        let mut r = reading(0.10, &board);
        arm(&mut r.hands.white, 12, 51..=53);
        arm(&mut r.hands.white, 15, 51..=53);
        tracker.push(&r, &mut out);
        // It sweeps back in, its arm now across the right half of the edge.
        let mut r = reading(0.15, &board);
        for c in (13..=49).step_by(3) {
            arm(&mut r.hands.white, c, 51..=53);
        }
        arm(&mut r.hands.white, 40, 30..=53);
        tracker.push(&r, &mut out);
        assert_eq!(ids(&tracker), ["w2"]);
    }

    /// White lifts the bishop on g5 (Black's knight on f6 in its reach, the pawn on g7 not),
    /// holds it at f6 (the arm's far end at cell row `top`: 17 is f6, 5 beyond it on f8) for
    /// `stay` readings with a contact reading of 0.65 on `read` if any (and no reading at all for
    /// `still` seconds in the middle: frames skipped because nothing moved), goes towards the
    /// h-file with it if `away`, and puts it back.
    fn bishop_held_at_f6(top: usize, stay: usize, still: f64, read: Option<Square>, away: bool) -> Vec<Event> {
        let start = board_of("rnbqkb1r/pppppppp/5n2/6B1/3P4/8/PPP1PPPP/RN1QKBNR");
        let lifted = without(&start, &[Square::G5]);
        let mut tracker = Tracker::new(start.clone(), Options::default());
        let (mut out, mut t) = (Vec::new(), 0.0);
        feed_arm(&mut tracker, &mut t, &start, Some((41, 22)), &[], 4, &mut out);
        feed_arm(&mut tracker, &mut t, &lifted, Some((41, 22)), &[], 6, &mut out);
        let at_f6 = |r: &mut Reading| {
            arm(&mut r.hands.white, 37, top..=53);
            if let Some(sq) = read {
                r.squares[sq as usize].contact = 0.65;
            }
        };
        feed_edited(&mut tracker, &mut t, &lifted, stay / 2, &mut out, at_f6);
        t += still;
        feed_edited(&mut tracker, &mut t, &lifted, stay - stay / 2, &mut out, at_f6);
        if away {
            feed_arm(&mut tracker, &mut t, &lifted, Some((47, 30)), &[], 4, &mut out);
        }
        feed_arm(&mut tracker, &mut t, &lifted, Some((41, 22)), &[], 4, &mut out);
        feed_arm(&mut tracker, &mut t, &start, Some((41, 22)), &[], 4, &mut out);
        feed_arm(&mut tracker, &mut t, &start, None, &[], 10, &mut out);
        tracker.finish(&mut out);
        out
    }

    #[test]
    fn a_held_piece_meeting_a_piece_it_could_take_is_a_contact_on_a_weaker_reading() {
        // A contact reading of 0.65 on the knight the held bishop could take: a capture begun
        // (4.3.3). The same reading on the g7 pawn, which the bishop cannot take, is nothing.
        assert_eq!(events(&bishop_held_at_f6(17, 8, 0.0, Some(Square::F6), false)), ["lift g5", "contact f6", "release g5"]);
        assert_eq!(events(&bishop_held_at_f6(17, 8, 0.0, Some(Square::G7), false)), ["lift g5", "release g5"]);
    }

    #[test]
    fn a_held_piece_that_stayed_at_a_piece_it_could_take_and_was_carried_away_met_it() {
        // No contact read, but the bishop held at the knight for 0.6 s, then carried off still
        // in hand: a capture begun and taken back, for the arbiter to judge. Held there only a
        // moment on the way, or set down without leaving the knight, it is nothing.
        let stayed = bishop_held_at_f6(17, 12, 0.0, None, true);
        assert_eq!(events(&stayed), ["lift g5", "contact f6", "release g5"]);
        assert!(stayed[1].conf.is_some_and(|c| c < 0.7), "a judgement, not an accusation: {stayed:?}");
        assert_eq!(events(&bishop_held_at_f6(17, 3, 0.0, None, true)), ["lift g5", "release g5"]);
        assert_eq!(events(&bishop_held_at_f6(17, 12, 0.0, None, false)), ["lift g5", "release g5"]);
        // The arm lying across the knight while the fingers are on f8 is no stay at f6.
        assert_eq!(events(&bishop_held_at_f6(5, 12, 0.0, None, true)), ["lift g5", "release g5"]);
        // Frames skipped while the hand held still do not break the stay.
        assert_eq!(events(&bishop_held_at_f6(17, 6, 0.7, None, true)), ["lift g5", "contact f6", "release g5"]);
    }

    #[test]
    fn a_hand_that_takes_the_opponents_piece_first_removes_it() {
        // White takes Black's d5 pawn first (en passant), and the same hand, never seen off the
        // board, lifts the e5 pawn and sets it on d6: the black pawn went off the board as it
        // was taken up, and nothing is put aside later.
        let start = board_of("rnbqkbnr/ppp1pppp/8/3pP3/8/8/PPPP1PPP/RNBQKBNR");
        let taken = without(&start, &[Square::D5]);
        let lifted = without(&taken, &[Square::E5]);
        let moved = board_of("rnbqkbnr/ppp1pppp/3P4/8/8/8/PPPP1PPP/RNBQKBNR");
        let arm = Some((29, 18));
        let got = play(&start, &[(&start, arm), (&taken, arm), (&taken, arm), (&lifted, arm), (&moved, arm), (&moved, None), (&moved, None)]);
        assert_eq!(events(&got), ["remove d5", "lift e5", "release d6"]);
    }

    /// The events of White's hand reaching for the king from the start position (its arm over
    /// the e-file) in `phases`: readings of the start position with contact on the squares
    /// given, then with the king lifted.
    fn reach_for_the_king(phases: &[(bool, &[Square], usize)]) -> Vec<String> {
        let start = Board::default();
        let lifted = without(&start, &[Square::E1]);
        let mut tracker = Tracker::new(start.clone(), Options::default());
        let (mut out, mut t) = (Vec::new(), 0.0);
        for &(gone, touched, n) in phases {
            feed_arm(&mut tracker, &mut t, if gone { &lifted } else { &start }, Some((28, 40)), touched, n, &mut out);
        }
        tracker.finish(&mut out);
        events(&out)
    }

    #[test]
    fn a_held_pawn_meets_only_the_pieces_it_could_take_diagonally() {
        // White's e4 pawn in hand, a contact reading of 0.65 on Black's pawn ahead on e5 (which
        // it cannot take) or on d5 (which it can).
        let start = board_of("rnbqkbnr/ppp2ppp/8/3pp3/4P3/8/PPPP1PPP/RNBQKBNR");
        let lifted = without(&start, &[Square::E4]);
        let run = |met: Square| {
            let mut tracker = Tracker::new(start.clone(), Options::default());
            let (mut out, mut t) = (Vec::new(), 0.0);
            feed_arm(&mut tracker, &mut t, &start, Some((29, 27)), &[], 4, &mut out);
            feed_arm(&mut tracker, &mut t, &lifted, Some((29, 27)), &[], 6, &mut out);
            feed_edited(&mut tracker, &mut t, &lifted, 8, &mut out, |r| {
                arm(&mut r.hands.white, 27, 22..=53);
                r.squares[met as usize].contact = 0.65;
            });
            feed_arm(&mut tracker, &mut t, &lifted, Some((29, 27)), &[], 4, &mut out);
            feed_arm(&mut tracker, &mut t, &start, Some((29, 27)), &[], 4, &mut out);
            feed_arm(&mut tracker, &mut t, &start, None, &[], 10, &mut out);
            tracker.finish(&mut out);
            events(&out)
        };
        assert_eq!(run(Square::D5), ["lift e4", "contact d5", "release e4"]);
        assert_eq!(run(Square::E5), ["lift e4", "release e4"]);
    }

    #[test]
    fn a_short_contact_just_before_grasping_another_piece_is_a_brush() {
        // White's hand comes in over d1 and e1, its fingers on both for a moment, then on e1
        // only, and lifts the king.
        let got = reach_for_the_king(&[(false, &[], 4), (false, &[Square::D1, Square::E1], 2), (false, &[Square::E1], 3), (true, &[], 8)]);
        assert_eq!(got.first().map(String::as_str), Some("brush d1"), "{got:?}");
        assert!(got.contains(&"lift e1".to_string()), "{got:?}");
    }

    #[test]
    fn a_short_contact_half_a_second_before_grasping_the_piece_beside_it_is_a_brush() {
        // The hand reaching for the king brushes the queen for 0.15 s, and is read touching the
        // king 0.45 s later, as it grasps it.
        let got = reach_for_the_king(&[(false, &[], 4), (false, &[Square::D1], 3), (false, &[], 8), (false, &[Square::E1], 3), (true, &[], 8)]);
        assert_eq!(got, ["brush d1", "lift e1"]);
    }

    #[test]
    fn a_contact_read_twice_and_nothing_after_is_a_glance() {
        // The hand over d1 reads contact with the queen for two readings (0.05 s), or three
        // (0.1 s), and goes away.
        let touched = |n| reach_for_the_king(&[(false, &[], 4), (false, &[Square::D1], n), (false, &[], 20)]);
        assert_eq!(touched(2), Vec::<String>::new());
        assert_eq!(touched(3), ["touch d1"]);
    }

    #[test]
    fn a_hand_back_alone_with_the_other_number_is_in_doubt() {
        let board = board_of;
        let start = Board::default();
        let g1_gone = board("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKB1R");
        let on_f3 = board("rnbqkbnr/pppppppp/8/8/8/5N2/PPPPPPPP/RNBQKB1R");
        let b1_gone = board("rnbqkbnr/pppppppp/8/8/8/5N2/PPPPPPPP/R1BQKB1R");
        let on_c3 = board("rnbqkbnr/pppppppp/8/8/8/2N2N2/PPPPPPPP/R1BQKB1R");
        let mut tracker = Tracker::new(start.clone(), Options::default());
        let (mut out, mut t) = (Vec::new(), 0.0);
        // The right hand (its arm on the h-file side of White's edge) plays g1-f3 and leaves;
        // then a hand comes alone across the a-file side and plays b1-c3.
        let phases: [(&Board, Option<usize>, usize); 7] =
            [(&start, Some(39), 4), (&g1_gone, Some(39), 8), (&on_f3, Some(39), 4), (&on_f3, None, 40), (&on_f3, Some(12), 4), (&b1_gone, Some(12), 8), (&on_c3, None, 40)];
        for (board, arm_col, n) in phases {
            feed_arm(&mut tracker, &mut t, board, arm_col.map(|col| (col, 27)), &[], n, &mut out);
        }
        tracker.finish(&mut out);
        let got: Vec<(String, String, f32)> = out.iter().map(|e| (e.hand.to_string(), e.action.name().to_string(), e.hand_conf.unwrap_or(1.0))).collect();
        let hands: Vec<&str> = got.iter().map(|g| g.0.as_str()).collect();
        assert_eq!(hands, ["w1", "w1", "w2", "w2"], "{got:?}");
        assert!(got[..2].iter().all(|g| g.2 > 0.9) && got[2..].iter().all(|g| g.2 <= IDENTITY_CONF), "{got:?}");
    }

    #[test]
    fn a_second_hand_is_sure_of_its_number_only_where_its_own_arm_says_it() {
        let start = Board::default();
        // The right hand (its arm over the g-file) lifts the g1 knight while a second blob, its
        // arm over the b-file (the left half of White's edge) or over the h-file (the right half
        // again), lifts the piece under it.
        let run = |second_col: usize, second: Square| {
            let mut tracker = Tracker::new(start.clone(), Options::default());
            let (mut out, mut t) = (Vec::new(), 0.0);
            let lifted = without(&start, &[Square::G1, second]);
            feed_arm(&mut tracker, &mut t, &start, Some((39, 27)), &[], 4, &mut out);
            let both = |r: &mut Reading| {
                arm(&mut r.hands.white, 39, 27..=53);
                arm(&mut r.hands.white, second_col, 27..=53);
            };
            feed_edited(&mut tracker, &mut t, &start, 4, &mut out, both);
            feed_edited(&mut tracker, &mut t, &lifted, 8, &mut out, both);
            tracker.finish(&mut out);
            let lift = |sq: Square| out.iter().find(|e| e.action == Action::Lift(sq)).map(|e| (e.hand.to_string(), e.hand_conf.unwrap_or(1.0)));
            (lift(Square::G1), lift(second))
        };
        let (first, left) = run(12, Square::B1);
        assert_eq!(first, Some(("w1".to_string(), 1.0)));
        assert_eq!(left, Some(("w2".to_string(), 1.0)), "an arm of its own, across the other half");
        let (first, right) = run(48, Square::H1);
        assert_eq!(first, Some(("w1".to_string(), 1.0)));
        assert_eq!(right, Some(("w2".to_string(), IDENTITY_CONF)), "an arm across the same half as the right hand's: perhaps a fragment of it");
    }
}
