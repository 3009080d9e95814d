//! The observation model: what one [`Reading`] says about a board, as a cost in nats.
//!
//! A square's reading is scored on what a new set gets right first: its kind (empty, a White
//! piece, a Black piece), and only then, more weakly, the piece's type. A square a hand covers
//! says little, so its cost is weighted by how much of it is seen; and a reading counts as one
//! independent look at the board only when it is [`Params::look_s`] after the previous one
//! (video frames a few milliseconds apart see the same misread again; stills a move apart do
//! not). Costs are regrets: 0 for the content the reading likes best, so boards are compared by
//! the few squares where they differ.

use shakmaty::{Bitboard, Board, Color, Piece, Square};

use crate::detect::Reading;
use crate::detect::reading::{CLASSES, piece_class};

/// The observation model's parameters, checked with the decoder's costs on labelled clips by
/// `examples/fit_decoder.rs` (see `docs/measuring.md`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// Floor added to every probability: a square's reading can cost at most about
    /// `-ln(floor)`, so one confident misread never outweighs the chess prior on its own.
    pub floor: f32,
    /// Weight of the piece type against the kind (empty / White / Black).
    pub type_weight: f32,
    /// Seconds between readings that make them independent looks at the board.
    pub look_s: f64,
    /// A square's weight is `(1 - cover)^cover_power`.
    pub cover_power: i32,
}

impl Default for Params {
    fn default() -> Params {
        Params { floor: 0.02, type_weight: 0.3, look_s: 0.2, cover_power: 2 }
    }
}

/// One reading, ready to score boards against.
#[derive(Clone, Debug)]
pub struct Evidence {
    /// Per square and class, the weighted regret of that content in nats (0 for the best).
    cost: [[f32; CLASSES]; 64],
    /// How much this reading counts (0..1): the time since the previous one over
    /// [`Params::look_s`].
    pub weight: f64,
    /// How surely a hand or arm is over or beside the board (0..1).
    pub hands: f32,
    /// Squares a hand covers a fifth or more of.
    pub covered: Bitboard,
    /// Squares read empty with probability [`SURE`] or more, uncovered.
    pub empty: Bitboard,
    /// Squares read as holding a piece of the colour (probability [`SURE`] or more), uncovered.
    pub colour: [Bitboard; 2],
}

/// Cover from which a square counts as covered by a hand.
pub(crate) const COVERED: f32 = 0.2;
/// Kind probability from which an uncovered square's kind is taken as read, where the board
/// proposes illegal moves (a piece gone from one square, one of its colour on another): the
/// likelier half. A proposal only lets a history be priced, and the readings and the price of
/// an illegal move decide; at 0.7, a knight read Black at 0.64 to 0.74 on the photos after it
/// was set down (a knight's move no knight makes) was proposed on none where the history
/// still waited for it, and a legal capture elsewhere was read in its place
/// (`render.illegal --games 8 --seed 0`: 242 of 297 plies at 0.5, 218 at 0.7).
const SURE: f32 = 0.5;

impl Evidence {
    /// Scores `reading`, taken `dt` seconds after the previous one (infinite for the first).
    pub fn new(reading: &Reading, dt: f64, params: &Params) -> Evidence {
        Evidence::with_stillness(reading, dt, &[0.0; 64], params)
    }

    /// Scores `reading`, taken `dt` seconds after the previous one, each square `still[sq]`
    /// seconds after its reading last changed (its likeliest class, or a hand over it). The
    /// same view read again repeats its misreads of the piece's type (a queen at the board's far
    /// edge read as a rook in every frame): for the type, a square looked at unchanged for `s`
    /// seconds counts `dt / (look_s + s)` of a look, so what a still stretch says of it grows
    /// with the logarithm of its length, not the length. Its kind (empty, White, Black) counts
    /// in full at every look.
    pub fn with_stillness(reading: &Reading, dt: f64, still: &[f64; 64], params: &Params) -> Evidence {
        let weight = (dt / params.look_s).clamp(0.0, 1.0);
        let mut cost = [[0.0f32; CLASSES]; 64];
        let (mut covered, mut empty, mut colour) = (Bitboard::EMPTY, Bitboard::EMPTY, [Bitboard::EMPTY; 2]);
        for sq in Square::ALL {
            let r = reading.square(sq);
            // The kind is read afresh in each look; the type, where a view repeats, repeats its
            // misreads (see `with_stillness`).
            let hidden = (1.0 - r.cover.clamp(0.0, 1.0)).powi(params.cover_power);
            let fresh = (dt / (params.look_s + still[sq as usize])).clamp(0.0, 1.0);
            let (kind_w, type_w) = (hidden * weight as f32, hidden * fresh as f32);
            let kinds = [r.classes[0], r.color(Color::White), r.color(Color::Black)];
            let mut ll = [0.0f32; CLASSES];
            for (class, l) in ll.iter_mut().enumerate() {
                let kind = if class == 0 { 0 } else if class <= 6 { 1 } else { 2 };
                *l = kind_w * (params.floor + kinds[kind]).ln();
                if class > 0 {
                    let given = r.classes[class] / kinds[kind].max(1e-6);
                    *l += type_w * params.type_weight * (params.floor + given).ln();
                }
            }
            let best = ll.iter().copied().fold(f32::MIN, f32::max);
            for class in 0..CLASSES {
                cost[sq as usize][class] = best - ll[class];
            }
            if r.cover >= COVERED {
                covered.add(sq);
            } else if kinds[0] >= SURE {
                empty.add(sq);
            } else if kinds[1] >= SURE {
                colour[0].add(sq);
            } else if kinds[2] >= SURE {
                colour[1].add(sq);
            }
        }
        let hands = reading.hands.white.iter().chain(&reading.hands.black).copied().fold(0.0f32, f32::max);
        let cover = reading.squares.iter().map(|s| s.cover).fold(0.0f32, f32::max);
        Evidence { cost, weight, hands: hands.max(cover / COVERED).min(1.0), covered, empty, colour }
    }

    /// Counts the readings of `squares` at `weight` (0..1) of their worth.
    pub fn discount(&mut self, squares: Bitboard, weight: f32) {
        for sq in squares {
            for c in &mut self.cost[sq as usize] {
                *c *= weight;
            }
        }
    }

    /// The cost of `content` on `sq`.
    pub fn square(&self, sq: Square, content: Option<Piece>) -> f64 {
        f64::from(self.cost[sq as usize][piece_class(content)])
    }

    /// The cost of the whole board.
    pub fn board(&self, board: &Board) -> f64 {
        Square::ALL.iter().map(|&sq| self.square(sq, board.piece_at(sq))).sum()
    }

    /// Squares read surely as holding a piece of `color`.
    pub fn colour(&self, color: Color) -> Bitboard {
        self.colour[usize::from(color == Color::Black)]
    }
}

/// `reading` with the squares of `sure` where `board` (what the decoder reads) and the reading
/// disagree on the kind (empty, White, Black) read as `board` says: a misread in place, which
/// the chess prior outvotes. Squares a hand covers `cover_max` or more of are left as read.
pub fn corrected(reading: &Reading, board: &Board, sure: Bitboard, cover_max: f32) -> Reading {
    let mut out = reading.clone();
    for sq in sure {
        let r = &mut out.squares[sq as usize];
        let want = board.piece_at(sq);
        let kind = |class: usize| if class == 0 { 0 } else if class <= 6 { 1 } else { 2 };
        let read = (0..CLASSES).max_by(|&a, &b| r.classes[a].total_cmp(&r.classes[b])).unwrap_or(0);
        if r.cover >= cover_max || kind(read) == kind(piece_class(want)) {
            continue;
        }
        let class = piece_class(want);
        let rest = 0.1 / (CLASSES - 1) as f32;
        r.classes = std::array::from_fn(|c| if c == class { 0.9 } else { rest });
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::detect::{HandMap, SquareReading};

    /// A reading that shows `board` with probability `p` on each square (the rest spread over
    /// the other classes), no hand anywhere.
    pub(crate) fn reading_of(board: &Board, p: f32, t: f64) -> Reading {
        let squares = std::array::from_fn(|i| {
            let class = piece_class(board.piece_at(Square::new(i as u32)));
            let rest = (1.0 - p) / (CLASSES - 1) as f32;
            SquareReading { classes: std::array::from_fn(|c| if c == class { p } else { rest }), cover: 0.0, contact: 0.0 }
        });
        Reading { frame: 0, t, squares, hands: HandMap { side: 18, cells_per_square: 2, margin: 1, white: vec![0.0; 324], black: vec![0.0; 324] } }
    }

    #[test]
    fn the_board_read_costs_nothing_and_a_changed_square_costs_its_regret() {
        let board = Board::default();
        let ev = Evidence::new(&reading_of(&board, 0.9, 0.0), f64::INFINITY, &Params::default());
        assert_eq!(ev.board(&board), 0.0);
        let mut moved = board.clone();
        moved.discard_piece_at(Square::E2);
        moved.set_piece_at(Square::E4, Color::White.pawn());
        let cost = ev.board(&moved);
        assert!(cost > 4.0 && cost < 10.0, "{cost}");
        assert_eq!(ev.empty.count(), 32);
        assert_eq!(ev.colour(Color::White).count(), 16);
    }

    #[test]
    fn the_type_weighs_less_than_the_kind_and_cover_hides_a_square() {
        let board = Board::default();
        let mut reading = reading_of(&board, 0.9, 0.0);
        let ev = Evidence::new(&reading, f64::INFINITY, &Params::default());
        let queen_for_king = ev.square(Square::E1, Some(Color::White.queen()));
        let empty_for_king = ev.square(Square::E1, None);
        let black_for_king = ev.square(Square::E1, Some(Color::Black.king()));
        assert!(queen_for_king < empty_for_king && queen_for_king < black_for_king);
        reading.squares[Square::E1 as usize].cover = 0.9;
        let ev = Evidence::new(&reading, f64::INFINITY, &Params::default());
        assert!(ev.square(Square::E1, None) < 0.1 * empty_for_king);
        assert!(ev.covered.contains(Square::E1));
        assert_eq!(ev.hands, 1.0);
    }

    #[test]
    fn readings_close_in_time_count_for_less() {
        let board = Board::default();
        let reading = reading_of(&board, 0.9, 0.0);
        let full = Evidence::new(&reading, 1.0, &Params::default());
        let frame = Evidence::new(&reading, 0.05, &Params::default());
        let ratio = frame.square(Square::E2, None) / full.square(Square::E2, None);
        assert!((ratio - 0.05 / Params::default().look_s).abs() < 1e-6, "{ratio}");
    }
}
