//! Where the hands were, for the pieces they carried: a capture begun and taken back shows as
//! a hand holding its player's piece at a piece of the other colour that it could take, then
//! carried away still in hand.
//!
//! From above, a held piece resting on the piece it was about to take often reads no contact:
//! the hand hides both. The hand's stay is then the evidence. The history keeps, reading by
//! reading, the squares the far end of each hand over the board (its fingers, not its arm: see
//! `Track::tip_distance`) was within [`STAY_NEAR`] squares of, and those it was within
//! [`AWAY`] of. When a held piece is set down, the interpreter asks [`Carried::stay`] whether
//! the hand that held it stayed at a square for [`STAY_MIN_S`] or longer (gaps of at most
//! [`STAY_GAP_S`]) and then, still holding it, went [`AWAY`] squares or more from it: a hand
//! carrying a piece past another passes over it in a few readings, and one setting its piece
//! down beside another stays there without leaving it in hand.

use std::collections::VecDeque;

use shakmaty::{Bitboard, Square};

use super::hands::Hands;
use crate::detect::Reading;
use crate::events::Hand;

/// Squares from the nearest cell of the hand's far end to the centre of a square within which
/// the hand is at its piece.
const STAY_NEAR: f32 = 0.6;
/// Squares from a square the hand's far end must reach for its stay there to be over.
const AWAY: f32 = 1.5;
/// Shortest stay, in seconds, that counts.
const STAY_MIN_S: f64 = 0.4;
/// Longest gap, in seconds, inside one stay (readings skipped where nothing moved).
const STAY_GAP_S: f64 = 0.5;
/// Seconds of history kept: longer than a piece is held in one move.
const KEPT_S: f64 = 60.0;

#[derive(Clone, Copy, Debug)]
struct Seen {
    t: f64,
    hand: Hand,
    near: Bitboard,
    within: Bitboard,
}

/// The recent history of where each hand over the board was.
#[derive(Clone, Debug, Default)]
pub struct Carried {
    seen: VecDeque<Seen>,
}

impl Carried {
    /// Takes in where the hands (after `hands` took in `reading`) are.
    pub fn update(&mut self, reading: &Reading, hands: &Hands) {
        let t = reading.t;
        for track in hands.tracks().iter().filter(|tr| tr.over_board && tr.seen == t) {
            let (mut near, mut within) = (Bitboard::EMPTY, Bitboard::EMPTY);
            for sq in Square::ALL {
                let distance = track.tip_distance(&reading.hands, sq);
                if distance <= STAY_NEAR {
                    near.add(sq);
                }
                if distance < AWAY {
                    within.add(sq);
                }
            }
            self.seen.push_back(Seen { t, hand: track.hand, near, within });
        }
        while self.seen.front().is_some_and(|s| s.t < t - KEPT_S) {
            self.seen.pop_front();
        }
    }

    /// The start of the first stay of `hand` at `sq` between `from` and `to` (seconds) that
    /// lasted [`STAY_MIN_S`] and after which the hand was seen [`AWAY`] from `sq` before `to`.
    pub fn stay(&self, hand: Hand, sq: Square, from: f64, to: f64) -> Option<f64> {
        let mut stay: Option<(f64, f64)> = None;
        for s in self.seen.iter().filter(|s| s.hand == hand && from <= s.t && s.t <= to) {
            if s.near.contains(sq) {
                stay = match stay {
                    Some((first, last)) if s.t - last <= STAY_GAP_S => Some((first, s.t)),
                    _ => Some((s.t, s.t)),
                };
            } else if !s.within.contains(sq)
                && let Some((first, last)) = stay.take()
                && last - first >= STAY_MIN_S
            {
                return Some(first);
            }
        }
        None
    }
}
