//! Touches: runs of contact readings on an occupied square, with the tracker's confidence.
//!
//! A run is the contact readings (at least [`Options::contact_min`], or
//! [`Options::capture_contact_min`] on a piece that a piece in its player's hand could take) on
//! one square with gaps of at most [`Options::contact_gap_s`]. It is decided once the square has
//! been seen again after the run: if its piece left (a lift or a removal, which the board change
//! reports), the run was the grasp and gives nothing; where a hand's visit to the square is
//! measured (`displace`), the visit decides it, since its probability weighs the same contact
//! with what the touch did to the piece; otherwise it is a touch dated at its first reading.
//!
//! A run of a single reading is noise and gives nothing, and so does a glance (under
//! [`GLANCE_S`]) that is no graze on the way elsewhere. Confidence grows with the run's
//! length: `0.4 + seconds`, but never past [`TOUCH_CONF_MAX`], under the rule engine's default
//! `--min-conf` of 0.7: a touch the contact reading alone shows supports a judgement, never an
//! accusation (the board model's contact reading is the weakest of its outputs: see
//! models/README.md; a long run is as often a hand reaching across the square). A short
//! run (under 0.4 s) followed within [`Options::graze_s`] by the same hand's contact with
//! another square, or its grasp of another piece, is a graze on the way there: a `brush`.
//! Vision cannot tell a brush from a deliberate touch; it says how sure it is and the engine
//! decides.

use shakmaty::{Bitboard, Square};

use super::Options;
use super::displace::Visit;
use super::hands::Hands;
use super::squares::Squares;
use crate::detect::Reading;
use crate::events::Hand;

/// The most a touch seen only through the contact reading is trusted. On the 32 committed
/// clips, the touches the runs' length made sure (0.7 and more, as `0.4 + seconds` gave) were
/// none of them a scripted touch: each was the hand covering the square on its way to the
/// piece beside it; of the 50 touches reported, 2 were scripted ones (`touchmove eval`, within
/// 5 frames). A lift, which the board shows for several readings, is what makes a touched
/// piece sure. A visit that moved the piece (see `displace`) is held to the same bound: on the
/// clips rendered with what fingers do to a piece, 1 or 2 of 8 to 14 touches it reported were
/// scripted ones, too few to accuse on.
const TOUCH_CONF_MAX: f32 = 0.6;

/// A contact read for less long than this (seconds: two readings at 20 to 30 frames a
/// second) that is no graze on the way elsewhere gives nothing: a fingertip resting on a piece
/// is read longer, a hand passing over it is not. On the 64 rendered clips of
/// `fixtures/clips`, `fixtures/variants` and the `--seed-offset 14000` and `15000` sets, 2 of
/// the 26 touches such runs gave were scripted ones (one found a 4.3.2, the only ruling found
/// that rested on a glance), and one false 4.3.1 rested on them.
const GLANCE_S: f64 = 0.09;

/// A touch the readings support.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Touch {
    /// The square whose piece was touched.
    pub sq: Square,
    /// The first reading of the contact.
    pub t: f64,
    /// The hand nearest the square then.
    pub hand: Option<Hand>,
    /// How sure the tracker is of the event, 0 to 1.
    pub conf: f32,
    /// A graze on the way to another piece, not a touch.
    pub brush: bool,
}

#[derive(Clone, Copy, Debug)]
struct Run {
    sq: Square,
    hand: Option<Hand>,
    first: f64,
    last: f64,
    open: bool,
}

/// A visit measured this surely touched is a touch (the visit weighs the contact read with
/// what the touch did to the piece).
const VISIT_TOUCH_MIN: f32 = 0.5;

/// What the rest of the tracker says of the squares at a reading.
#[derive(Clone, Copy, Debug, Default)]
pub struct Marks {
    /// Pieces a held piece could take: a weaker contact there is a capture begun.
    pub capturable: Bitboard,
    /// Squares of a hand's visit that `displace` will measure: their runs wait for it.
    pub visiting: Bitboard,
}

/// Contact runs being followed or waiting to be decided.
#[derive(Clone, Debug, Default)]
pub struct Contacts {
    runs: Vec<Run>,
    /// Recent grasps (runs whose piece left): the hand, and when the piece left.
    grasps: Vec<(Option<Hand>, f64)>,
}

impl Contacts {
    /// The earliest time a touch still to be reported can carry.
    pub fn pending_since(&self) -> f64 {
        self.runs.iter().map(|r| r.first).fold(f64::INFINITY, f64::min)
    }

    /// Takes in one reading (after `squares` took it in); appends decided touches to `out`.
    pub fn update(&mut self, reading: &Reading, hands: &Hands, squares: &Squares, marks: Marks, opts: &Options, out: &mut Vec<Touch>) {
        let Marks { capturable, visiting } = marks;
        let t = reading.t;
        for run in self.runs.iter_mut().filter(|r| r.open && t - r.last > opts.contact_gap_s) {
            run.open = false;
        }
        for sq in Square::ALL {
            let contact = reading.square(sq).contact;
            let min = if capturable.contains(sq) { opts.capture_contact_min } else { opts.contact_min };
            if contact.is_nan() || contact < min {
                continue;
            }
            let hand = hands.nearest(&reading.hands, sq).map(|(h, _)| h);
            if let Some(run) = self.runs.iter_mut().find(|r| r.open && r.sq == sq) {
                run.last = t;
                run.hand = run.hand.or(hand);
            } else if squares.board().piece_at(sq).is_some() {
                self.runs.push(Run { sq, hand, first: t, last: t, open: true });
            }
        }
        self.decide(t, squares, visiting, opts, false, out);
    }

    /// Takes in a hand's visit to a square whose piece stayed, measured: it decides the runs of
    /// contacts it overlaps, since its probability weighs the contact read with what the touch
    /// did to the piece. A visit that surely touched the piece is a touch (appended to `out`).
    pub fn visited(&mut self, visit: Visit, out: &mut Vec<Touch>) {
        self.runs.retain(|r| !(r.sq == visit.sq && r.first <= visit.to && r.last >= visit.from));
        if visit.p >= VISIT_TOUCH_MIN {
            out.push(Touch { sq: visit.sq, t: visit.at, hand: visit.hand, conf: visit.p.min(TOUCH_CONF_MAX), brush: false });
        }
    }

    /// Decides every run still waiting (end of input).
    pub fn finish(&mut self, squares: &Squares, opts: &Options, out: &mut Vec<Touch>) {
        self.decide(f64::INFINITY, squares, Bitboard::EMPTY, opts, true, out);
    }

    fn decide(&mut self, t: f64, squares: &Squares, visiting: Bitboard, opts: &Options, all: bool, out: &mut Vec<Touch>) {
        // A grasp is a contact elsewhere as much as a touch is: remember the runs that were.
        for run in self.runs.iter().filter(|r| squares.changed(r.sq) >= r.first) {
            let grasp = (run.hand, squares.changed(run.sq));
            if !self.grasps.contains(&grasp) {
                self.grasps.push(grasp);
            }
        }
        let oldest = self.runs.iter().map(|r| r.first).fold(t, f64::min);
        self.grasps.retain(|&(_, left)| left >= oldest);
        let runs = self.runs.clone();
        let grasps = &self.grasps;
        self.runs.retain(|run| {
            let ready = all || (!run.open && t > run.last + opts.graze_s && squares.confirmed(run.sq) > run.last && !visiting.contains(run.sq));
            let lifted = squares.changed(run.sq) >= run.first;
            if !ready && !lifted {
                return true;
            }
            if !lifted && run.last > run.first {
                let length = run.last - run.first;
                let soon_after = |hand: Option<Hand>, at: f64| hand == run.hand && at > run.last && at <= run.last + opts.graze_s;
                let graze = length < 0.4
                    && (runs.iter().any(|o| o.sq != run.sq && soon_after(o.hand, o.first))
                        || grasps.iter().any(|&(hand, left)| soon_after(hand, left)));
                if !graze && length < GLANCE_S {
                    return false;
                }
                let conf = if graze { 0.4 } else { (0.4 + length as f32).min(TOUCH_CONF_MAX) };
                out.push(Touch { sq: run.sq, t: run.first, hand: run.hand, conf, brush: graze });
            }
            false
        });
    }
}
