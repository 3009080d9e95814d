//! Where the hands were, for the pieces they carried: a capture begun and taken back shows as
//! a hand holding its player's piece at a piece of the other colour that it could take, then
//! carried away still in hand.
//!
//! From above, a held piece resting on the piece it was about to take often reads no contact:
//! the hand hides both. The hand's stay is then the evidence. The history keeps, reading by
//! reading, the squares the far end of a hand over the board (its fingers, not its arm: see
//! `Track::tip`) was within [`STAY_NEAR`] squares of, and those it was within
//! [`AWAY`] of, for each player. When a held piece is set down, the interpreter asks
//! [`Carried::stay`] whether a hand of its player stayed at a square for [`STAY_MIN_S`] or
//! longer and then, the piece still in hand, went [`AWAY`] squares or more from it: a hand
//! carrying a piece past another passes over it in a few readings, and one setting its piece
//! down beside another stays there without leaving it in hand. The player's hands, not the
//! one hand id: the tracker may renumber a hand as its arm sweeps across the edge.

use std::collections::VecDeque;

use shakmaty::{Bitboard, Color, Square};

use super::hands::{Hands, cells_distance};
use crate::detect::Reading;

/// Squares from the nearest cell of the hand's far end to the centre of a square within which
/// the hand is at its piece.
const STAY_NEAR: f32 = 0.6;
/// Squares from a square the hand's far end must reach for its stay there to be over.
const AWAY: f32 = 1.5;
/// Shortest stay, in seconds, that counts.
const STAY_MIN_S: f64 = 0.4;
/// Longest time, in seconds, the hands may be read beside the square (not at it, not away) in
/// one stay.
const STAY_GAP_S: f64 = 0.5;
/// Seconds of history kept: longer than a piece is held in one move.
const KEPT_S: f64 = 60.0;

/// Where one player's hands over the board were in one reading.
#[derive(Clone, Copy, Debug)]
struct Seen {
    t: f64,
    side: Color,
    /// The squares some hand's far end was within [`STAY_NEAR`] of.
    near: Bitboard,
    /// The squares some hand's far end was within [`AWAY`] of.
    within: Bitboard,
}

/// The recent history of where each player's hands over the board were.
#[derive(Clone, Debug, Default)]
pub struct Carried {
    seen: VecDeque<Seen>,
}

impl Carried {
    /// Takes in where the hands (after `hands` took in `reading`) are.
    pub fn update(&mut self, reading: &Reading, hands: &Hands) {
        let t = reading.t;
        for side in Color::ALL {
            let mut seen = Seen { t, side, near: Bitboard::EMPTY, within: Bitboard::EMPTY };
            let mut tracks = hands.tracks().iter().filter(|tr| tr.hand.side == side && tr.over_board && tr.seen == t).peekable();
            if tracks.peek().is_none() {
                continue;
            }
            for track in tracks {
                let tip = track.tip(&reading.hands);
                for sq in Square::ALL {
                    let distance = cells_distance(tip.iter(), &reading.hands, sq);
                    if distance <= STAY_NEAR {
                        seen.near.add(sq);
                    }
                    if distance < AWAY {
                        seen.within.add(sq);
                    }
                }
            }
            self.seen.push_back(seen);
        }
        while self.seen.front().is_some_and(|s| s.t < t - KEPT_S) {
            self.seen.pop_front();
        }
    }

    /// The start of the first stay of a hand of `side` at `sq` between `from` and `to`
    /// (seconds) that lasted [`STAY_MIN_S`] and after which no hand of `side` was within
    /// [`AWAY`] of `sq` before `to`. Readings skipped because nothing moved do not break a stay;
    /// readings showing the hands elsewhere (but not away) for more than [`STAY_GAP_S`] do.
    pub fn stay(&self, side: Color, sq: Square, from: f64, to: f64) -> Option<f64> {
        let mut stay: Option<(f64, f64)> = None;
        for s in self.seen.iter().filter(|s| s.side == side && from <= s.t && s.t <= to) {
            if s.near.contains(sq) {
                stay = Some(stay.map_or((s.t, s.t), |(first, _)| (first, s.t)));
            } else if !s.within.contains(sq) {
                if let Some((first, last)) = stay.take()
                    && last - first >= STAY_MIN_S
                {
                    return Some(first);
                }
            } else if stay.is_some_and(|(_, last)| s.t - last > STAY_GAP_S) {
                stay = None;
            }
        }
        None
    }
}
