//! The tracker: turns the model's per-frame [`Reading`]s into the physical events of the event
//! contract (`docs/events.md`): `touch`, `brush`, `contact`, `lift`, `release`, `remove`,
//! `place` and `knock`, each with the hand that did it and the tracker's `conf`.
//!
//! It keeps a stable board (`squares`: hysteresis in time, and readings under a hand are not
//! trusted), follows each side's hands as blobs of the hand map with stable ids (`hands`: `w1`,
//! `w2`, `b1`, `b2`; the number comes from the board edge the arm crosses), turns contact
//! readings into touches with a confidence (`contacts`), and reads the dated observations in
//! time order against what each hand holds (`interpret`). So the number of hands in a move is
//! known (4.1), and where vision cannot tell a brush from a touch it says so through `conf`.
//!
//! Events come out when the tracker is sure nothing earlier can still be seen: a change is
//! dated back to when the hand made it, so an event waits until every square has been seen
//! uncovered since then. A square hidden for long holds the output back until it is seen.
//!
//! The clock is not in view: the tracker never emits `press`, and never `adjust` (a spoken
//! "j'adoube" is not in the pictures). The rule engine completes a move at the opponent's first
//! touch or at the end of the input.

mod contacts;
mod hands;
mod interpret;
mod squares;

use shakmaty::Board;

pub use hands::Track;

use crate::detect::Reading;
use crate::events::Event;
use contacts::Contacts;
use hands::{Hands, Left};
use interpret::{Interpreter, Observation};
use squares::{Seen, Squares};

/// The tracker's thresholds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    /// A square's class reading is trusted only while less than this fraction is covered.
    pub cover_max: f32,
    /// A class must have at least this probability to confirm or change a square.
    pub class_min: f32,
    /// Trusted readings in a row that must agree before a square changes (or is found knocked).
    pub hold: usize,
    /// Contact probability from which a hand is taken to touch the piece.
    pub contact_min: f32,
    /// Longest gap, in seconds, inside one contact (missed readings).
    pub contact_gap_s: f64,
    /// A short contact followed this soon (seconds) by the same hand's contact elsewhere is a
    /// graze on the way.
    pub graze_s: f64,
    /// Hand-map probability from which a cell belongs to a hand.
    pub hand_min: f32,
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
            hold: 3,
            contact_min: 0.5,
            contact_gap_s: 0.12,
            graze_s: 0.35,
            hand_min: 0.5,
            hand_min_cells: 4,
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
        }
    }

    /// Takes in the next reading and appends to `out` the events it is now sure of, in time
    /// order. Frames may be skipped (times come from `reading.t`); a reading earlier than the
    /// previous one, or with a time that is not a number, is ignored.
    pub fn push(&mut self, reading: &Reading, out: &mut Vec<Event>) {
        let t = reading.t;
        if !(t >= self.last_t) {
            return;
        }
        self.last_t = t;
        self.hands.update(&reading.hands, t, &self.opts, &mut self.leaving);
        let mut seen = Vec::new();
        self.squares.update(reading, &self.hands, &self.opts, &mut seen);
        for s in seen {
            match s {
                Seen::Change { sq, from, to, t, hand } => self.interpreter.push(t, Observation::Change { sq, from, to, hand }),
                Seen::Knock { sq, t, hand } => self.interpreter.push(t, Observation::Knock { sq, hand }),
            }
        }
        let mut touches = Vec::new();
        self.contacts.update(reading, &self.hands, &self.squares, &self.opts, &mut touches);
        self.take_touches(touches);
        let settled = self.squares.settled();
        self.take_leaving(|left| left.t < settled);
        let until = settled.min(self.contacts.pending_since()).min(t);
        self.interpreter.flush(until, out);
    }

    /// Ends the input: decides what is pending and appends the remaining events.
    pub fn finish(&mut self, out: &mut Vec<Event>) {
        let mut touches = Vec::new();
        self.contacts.finish(&self.squares, &self.opts, &mut touches);
        self.take_touches(touches);
        self.take_leaving(|_| true);
        self.interpreter.flush(f64::INFINITY, out);
    }

    /// The stable board as the tracker believes it now.
    pub fn board(&self) -> &Board {
        self.squares.board()
    }

    /// The hands it follows now.
    pub fn hands(&self) -> &[Track] {
        self.hands.tracks()
    }

    fn take_touches(&mut self, touches: Vec<contacts::Touch>) {
        for touch in touches {
            self.interpreter.push(touch.t, Observation::Touch { sq: touch.sq, hand: touch.hand, conf: touch.conf, brush: touch.brush });
        }
    }

    fn take_leaving(&mut self, ready: impl Fn(&Left) -> bool) {
        let (now, later): (Vec<Left>, Vec<Left>) = self.leaving.drain(..).partition(|l| ready(l));
        self.leaving = later;
        for left in now {
            self.interpreter.push(left.t, Observation::Left(left.hand));
        }
    }
}
