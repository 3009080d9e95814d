//! The likeliest position a still's reading shows, among those a game can reach: at most one
//! king a side (and, but for an empty board or one being set up, one), no pawn on the first or
//! last rank, at most eight pawns a side and no more promoted pieces than pawns gone. The model
//! reads each square alone; a king read as a queen beside the queen, or a king's crown read as a
//! pawn on the square behind it, breaks these, and the next likeliest reading of the square that
//! breaks them least is taken.
//!
//! The king rule is met exactly (no king, or the best square for it, for each side; the other
//! squares their best other class); the material rule, which a misread rarely breaks, greedily
//! (the cheapest change that removes a surplus piece, until none is left).

use shakmaty::{Board, ByColor, ByRole, Color, Piece, Rank, Role, Square};

use crate::detect::reading::{class_piece, piece_class};
use crate::detect::{CLASSES, Reading};

/// Floor of a probability, so that a class the model rules out stays comparable.
const FLOOR: f64 = 1e-6;

/// The chance that a side has no king on the board: an empty board, or pieces being set up.
/// 20 of the 174 sides of the labelled positions of `../shared/data`, so (20 + 1) / (174 + 2)
/// (`examples/fit_priors.rs`). A side never has two.
pub const NO_KING: f64 = 21.0 / 176.0;

/// The likeliest position under `reading`, and its log-probability: the reading's likelihood
/// (squares taken as independent) and the kings' prior.
pub fn likeliest(reading: &Reading) -> (Board, f64) {
    let lp = |sq: Square, class: usize| f64::from(reading.square(sq).classes[class]).max(FLOOR).ln();
    let allowed = |sq: Square, class: usize| match class_piece(class) {
        Some(Piece { role: Role::Pawn, .. }) => !matches!(sq.rank(), Rank::First | Rank::Eighth),
        Some(Piece { role: Role::King, .. }) => false,
        _ => true,
    };
    // Each square's best class other than a king.
    let mut classes: [usize; 64] = std::array::from_fn(|i| {
        let sq = Square::new(i as u32);
        (0..CLASSES).filter(|&c| allowed(sq, c)).max_by(|&a, &b| lp(sq, a).total_cmp(&lp(sq, b))).unwrap_or(0)
    });
    // Then the kings: for each side none, or one on the square that gains most, the best pair.
    let king = |color| piece_class(Some(Piece { color, role: Role::King }));
    let gain = |color, sq: Option<Square>| match sq {
        None => NO_KING.ln(),
        Some(sq) => (1.0 - NO_KING).ln() + lp(sq, king(color)) - lp(sq, classes[sq as usize]),
    };
    let options = |color| {
        let mut squares = Square::ALL.to_vec();
        squares.sort_by(|&a, &b| gain(color, Some(b)).total_cmp(&gain(color, Some(a))));
        [None, Some(squares[0]), Some(squares[1])]
    };
    let (white, black) = (options(Color::White), options(Color::Black));
    let pairs = white.iter().flat_map(|&w| black.iter().map(move |&b| (w, b)));
    let value = |(w, b): (Option<Square>, Option<Square>)| gain(Color::White, w) + gain(Color::Black, b);
    let (kw, kb) = pairs.filter(|(w, b)| w.is_none() || w != b).max_by(|&x, &y| value(x).total_cmp(&value(y))).unwrap_or((None, None));
    for (color, sq) in [(Color::White, kw), (Color::Black, kb)] {
        if let Some(sq) = sq {
            classes[sq as usize] = king(color);
        }
    }
    // Then any surplus material, the cheapest change first.
    while surplus(&classes) > 0 {
        let before = surplus(&classes);
        let change = Square::ALL
            .into_iter()
            .filter(|&sq| Some(sq) != kw && Some(sq) != kb)
            .flat_map(|sq| (0..CLASSES).map(move |c| (sq, c)))
            .filter(|&(sq, c)| allowed(sq, c) && c != classes[sq as usize])
            .filter(|&(sq, c)| {
                let mut changed = classes;
                changed[sq as usize] = c;
                surplus(&changed) < before
            })
            .min_by(|&(a, ca), &(b, cb)| (lp(a, classes[a as usize]) - lp(a, ca)).total_cmp(&(lp(b, classes[b as usize]) - lp(b, cb))));
        match change {
            Some((sq, c)) => classes[sq as usize] = c,
            None => break,
        }
    }
    let mut board = Board::empty();
    let mut score: f64 = [kw, kb].iter().map(|k| if k.is_some() { 1.0 - NO_KING } else { NO_KING }.ln()).sum();
    for sq in Square::ALL {
        let class = classes[sq as usize];
        score += lp(sq, class);
        if let Some(piece) = class_piece(class) {
            board.set_piece_at(sq, piece);
        }
    }
    (board, score)
}

/// How many pieces, over both sides, no game can have: pawns past eight, and promoted pieces
/// (queens past one, rooks, bishops and knights past two) past the pawns a side has lost.
fn surplus(classes: &[usize; 64]) -> usize {
    let mut count: ByColor<ByRole<usize>> = ByColor::default();
    for piece in classes.iter().filter_map(|&c| class_piece(c)) {
        *count.get_mut(piece.color).get_mut(piece.role) += 1;
    }
    count
        .iter()
        .map(|n| {
            let pawns = n.pawn;
            let promoted = n.queen.saturating_sub(1) + n.rook.saturating_sub(2) + n.bishop.saturating_sub(2) + n.knight.saturating_sub(2);
            pawns.saturating_sub(8) + (pawns.min(8) + promoted).saturating_sub(8)
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::reading::{HandMap, SquareReading};

    /// A reading that gives `fen`'s class 0.9 on each square, except where `swap` gives another
    /// class the 0.6 and the position's 0.3.
    fn reading(fen: &str, swap: &[(Square, Option<Piece>)]) -> Reading {
        let board: Board = fen.parse::<shakmaty::fen::Fen>().unwrap().as_setup().board.clone();
        let squares = std::array::from_fn(|i| {
            let sq = Square::new(i as u32);
            let truth = piece_class(board.piece_at(sq));
            let mut classes = [0.1 / (CLASSES - 1) as f32; CLASSES];
            classes[truth] = 0.9;
            if let Some(&(_, read)) = swap.iter().find(|(s, _)| *s == sq) {
                classes = [0.1 / (CLASSES - 2) as f32; CLASSES];
                classes[piece_class(read)] = 0.6;
                classes[truth] = 0.3;
            }
            SquareReading { classes, cover: 0.0, contact: 0.0 }
        });
        Reading { frame: 0, t: 0.0, squares, hands: HandMap { side: 0, cells_per_square: 1, margin: 0, white: vec![], black: vec![] } }
    }

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR";

    #[test]
    fn a_king_read_as_a_queen_beside_the_queen_is_the_king() {
        let read = reading(START, &[(Square::E1, Some(Piece { color: Color::White, role: Role::Queen }))]);
        assert_eq!(likeliest(&read).0.to_string(), START);
    }

    #[test]
    fn a_second_king_is_the_less_likely_ones_next_best_class() {
        let read = reading(START, &[(Square::D8, Some(Piece { color: Color::Black, role: Role::King }))]);
        assert_eq!(likeliest(&read).0.to_string(), START);
    }

    #[test]
    fn an_empty_board_or_one_being_set_up_has_no_king() {
        for fen in ["8/8/8/8/8/8/8/8", "8/8/8/3p1p2/4P3/5P2/8/8"] {
            assert_eq!(likeliest(&reading(fen, &[])).0.to_string(), fen);
        }
    }

    #[test]
    fn a_kings_crown_read_as_a_pawn_on_the_back_rank_is_not_a_pawn() {
        let fen = "6k1/8/8/8/8/8/8/4K3";
        let read = reading(fen, &[(Square::H8, Some(Piece { color: Color::Black, role: Role::Pawn }))]);
        assert_eq!(likeliest(&read).0.to_string(), fen);
    }

    #[test]
    fn a_ninth_pawn_is_the_least_sure_one_read_again() {
        let read = reading(START, &[(Square::E4, Some(Piece { color: Color::White, role: Role::Pawn }))]);
        assert_eq!(likeliest(&read).0.to_string(), START);
    }

    #[test]
    fn promoted_pieces_stand_when_pawns_are_gone() {
        let fen = "4k3/8/8/8/8/8/8/QQQQK3";
        assert_eq!(likeliest(&reading(fen, &[])).0.to_string(), fen);
    }

    #[test]
    fn a_reading_that_breaks_no_rule_is_read_square_by_square() {
        let fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R";
        let (board, score) = likeliest(&reading(fen, &[]));
        assert_eq!(board.to_string(), fen);
        assert!((score - 64.0 * f64::from(0.9f32).ln() - 2.0 * (1.0 - NO_KING).ln()).abs() < 1e-9);
    }
}
