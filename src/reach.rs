//! How pieces move, without the rules around them: whether a piece on a square could go to
//! another, so the tracker and the engine can tell which held piece a square suits when the
//! readings do not say.

use shakmaty::{Board, Color, Piece, Rank, Role, Square};

/// Whether `piece` on `from` could go to `to` on `board` (as `board` stands before it moves, in
/// the piece's own way: pawns forward or one square diagonally, kings one square or two along
/// their rank to castle).
pub fn could_move(piece: Piece, from: Square, to: Square, board: &Board) -> bool {
    let forward = |rank: i32| if piece.color == Color::White { rank } else { -rank };
    let (files, ranks) = (i32::from(to.file()) - i32::from(from.file()), i32::from(to.rank()) - i32::from(from.rank()));
    match piece.role {
        Role::Pawn => {
            let start = from.rank() == piece.color.fold_wb(Rank::Second, Rank::Seventh);
            (files == 0 && (ranks == forward(1) || (start && ranks == forward(2)))) || (files.abs() == 1 && ranks == forward(1))
        }
        Role::King => from.distance(to) == 1 || (ranks == 0 && files.abs() == 2),
        _ => shakmaty::attacks::attacks(from, piece, board.occupied()).contains(to),
    }
}
