//! Plain-English pieces of the sentences an arbiter reads out: sides, pieces, move lists.

use shakmaty::{Chess, Color, Move, Piece, Role, san::San};

/// "White" or "Black".
pub fn side(c: Color) -> &'static str {
    match c {
        Color::White => "White",
        Color::Black => "Black",
    }
}

/// "knight", "queen", ...
pub fn role(r: Role) -> &'static str {
    match r {
        Role::Pawn => "pawn",
        Role::Knight => "knight",
        Role::Bishop => "bishop",
        Role::Rook => "rook",
        Role::Queen => "queen",
        Role::King => "king",
    }
}

/// "the knight", or "Black's knight" when it is not `mover`'s.
pub fn piece(p: Piece, mover: Color) -> String {
    if p.color == mover { format!("the {}", role(p.role)) } else { format!("{}'s {}", side(p.color), role(p.role)) }
}

/// "Ne2, Nf3 or Nh3": the moves in SAN, from `pos`, in a stable order.
pub fn moves(pos: &Chess, moves: &[Move]) -> String {
    let mut sans: Vec<String> = moves.iter().map(|&m| San::from_move(pos, m).to_string()).collect();
    sans.sort();
    match sans.len() {
        0 => "any legal move".to_string(),
        1 => sans.remove(0),
        n => format!("{} or {}", sans[..n - 1].join(", "), sans[n - 1]),
    }
}

/// "Bc4": one move in SAN, from `pos`.
pub fn san(pos: &Chess, m: Move) -> String {
    San::from_move(pos, m).to_string()
}
