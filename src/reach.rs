//! How pieces move, without the rules around them: whether a piece on a square could go to
//! another, so the tracker and the engine can tell which held piece a square suits when the
//! readings do not say.

use shakmaty::{Bitboard, Board, Color, File, Piece, Rank, Role, Square};

/// Whether `piece` on `from` could go to `to` on `board` (as `board` stands before it moves, in
/// the piece's own way: pawns forward or one square diagonally, kings one square or two along
/// their rank to castle, rooks over their king to its side once it has gone two squares to
/// castle).
pub fn could_move(piece: Piece, from: Square, to: Square, board: &Board) -> bool {
    let forward = |rank: i32| if piece.color == Color::White { rank } else { -rank };
    let (files, ranks) = (i32::from(to.file()) - i32::from(from.file()), i32::from(to.rank()) - i32::from(from.rank()));
    match piece.role {
        Role::Pawn => {
            let start = from.rank() == piece.color.fold_wb(Rank::Second, Rank::Seventh);
            (files == 0 && (ranks == forward(1) || (start && ranks == forward(2)))) || (files.abs() == 1 && ranks == forward(1))
        }
        Role::King => from.distance(to) == 1 || (ranks == 0 && files.abs() == 2),
        Role::Rook if castles_over_king(piece.color, from, to, board) => true,
        _ => shakmaty::attacks::attacks(from, piece, board.occupied()).contains(to),
    }
}

/// Whether a rook of `color` on `from`, a corner of its back rank, going to `to` is the rook's
/// half of castling with its king already on the castling square: the rook passes over the
/// king (h1 to f1 over g1, a1 to d1 over c1, and on the eighth rank for Black).
fn castles_over_king(color: Color, from: Square, to: Square, board: &Board) -> bool {
    let back = color.backrank();
    let [h, f, g, a, d, c] = [File::H, File::F, File::G, File::A, File::D, File::C].map(|file| Square::from_coords(file, back));
    let king = if (from, to) == (h, f) {
        g
    } else if (from, to) == (a, d) {
        c
    } else {
        return false;
    };
    let between = shakmaty::attacks::between(from, to);
    board.piece_at(king) == Some(color.king()) && (between & board.occupied()) == Bitboard::from(king)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(fen: &str) -> Board {
        fen.parse::<shakmaty::fen::Fen>().unwrap().as_setup().board.clone()
    }

    #[test]
    fn a_castling_rook_goes_over_its_king_but_over_nothing_else() {
        let rook = Color::White.rook();
        // The king already on g1: the rook from h1 to f1 passes over it.
        assert!(could_move(rook, Square::H1, Square::F1, &board("4k3/8/8/8/8/8/8/6KR")));
        // A knight on g1 blocks it, and a king elsewhere makes it no castling.
        assert!(!could_move(rook, Square::H1, Square::F1, &board("4k3/8/8/8/8/8/8/4K1NR")));
        // Queenside: over the king on c1, with b1 empty; not with a knight on b1.
        assert!(could_move(rook, Square::A1, Square::D1, &board("4k3/8/8/8/8/8/8/R1K5")));
        assert!(!could_move(rook, Square::A1, Square::D1, &board("4k3/8/8/8/8/8/8/RNK5")));
        // Black's, on the eighth rank.
        assert!(could_move(Color::Black.rook(), Square::H8, Square::F8, &board("6kr/8/8/8/8/8/8/4K3")));
    }
}
