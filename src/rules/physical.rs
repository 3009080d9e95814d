//! The board as the hands leave it during a move: pieces on squares, pieces in hands, and the
//! square each piece stood on when the move began (touch-move is about those squares).

use shakmaty::{Board, Color, Piece, Role, Square};

use crate::events::Hand;

/// A piece standing on the board or held in a hand, with where it stood when the move began
/// (`None` for a piece brought from off the board, as in promotion).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tracked {
    /// The piece.
    pub piece: Piece,
    /// Its square at the start of the move.
    pub origin: Option<Square>,
}

/// The pieces as they physically are.
#[derive(Clone, Debug)]
pub struct Physical {
    board: Board,
    origin: [Option<Square>; 64],
    held: Vec<(Hand, Tracked)>,
}

impl Physical {
    /// A board at rest: every piece on `board` is its own origin, nothing is held.
    pub fn new(board: &Board) -> Physical {
        let mut origin = [None; 64];
        for sq in board.occupied() {
            origin[usize::from(sq)] = Some(sq);
        }
        Physical { board: board.clone(), origin, held: Vec::new() }
    }

    /// The pieces standing on the board.
    pub fn board(&self) -> &Board {
        &self.board
    }

    /// The piece standing on `sq`.
    pub fn at(&self, sq: Square) -> Option<Tracked> {
        self.board.piece_at(sq).map(|piece| Tracked { piece, origin: self.origin[usize::from(sq)] })
    }

    /// Takes the piece on `sq` off the board.
    pub fn take(&mut self, sq: Square) -> Option<Tracked> {
        let tracked = self.at(sq)?;
        self.board.discard_piece_at(sq);
        self.origin[usize::from(sq)] = None;
        Some(tracked)
    }

    /// Stands `tracked` on `sq`, returning the piece that stood there.
    pub fn put(&mut self, sq: Square, tracked: Tracked) -> Option<Tracked> {
        let displaced = self.take(sq);
        self.board.set_piece_at(sq, tracked.piece);
        self.origin[usize::from(sq)] = tracked.origin;
        displaced
    }

    /// `hand` lifts the piece on `sq`.
    pub fn lift(&mut self, hand: Hand, sq: Square) -> Option<Tracked> {
        let tracked = self.take(sq)?;
        self.held.push((hand, tracked));
        Some(tracked)
    }

    /// `hand` lets go of a piece, onto `onto` if it is set down on the board: of `color`'s king
    /// and a rook both in that hand, the one castling puts there (the king two files from its
    /// square, the rook on the file next to it); else the piece of `color` that stood there,
    /// put back; else, of pieces of two colours in the hand (the tracker may give a hand the
    /// wrong side), the last one that could go there from where it stood, `color`'s first; else
    /// the last piece of `color` it picked up (a hand holding its own piece and a captured one
    /// puts its own on the board and the captured one aside); else the last piece it picked up.
    pub fn let_go(&mut self, hand: Hand, color: Color, onto: Option<Square>) -> Option<Tracked> {
        let i = self.letting_go(hand, color, onto)?;
        Some(self.held.remove(i).1)
    }

    /// The piece [`Physical::let_go`] would let go, left in the hand.
    pub fn would_let_go(&self, hand: Hand, color: Color, onto: Option<Square>) -> Option<Tracked> {
        self.letting_go(hand, color, onto).map(|i| self.held[i].1)
    }

    /// The index in `held` of the piece [`Physical::let_go`] lets go.
    fn letting_go(&self, hand: Hand, color: Color, onto: Option<Square>) -> Option<usize> {
        let reaches = |t: &Tracked, sq: Square| t.origin.is_some_and(|from| crate::reach::could_move(t.piece, from, sq, &self.board));
        let in_hand = |c: Color| self.held.iter().any(|(h, t)| *h == hand && t.piece.color == c);
        let mixed = in_hand(Color::White) && in_hand(Color::Black);
        onto.and_then(|sq| self.castling_piece(hand, color, sq))
            .or_else(|| onto.and_then(|sq| self.held.iter().position(|(h, t)| *h == hand && t.piece.color == color && t.origin == Some(sq))))
            .or_else(|| {
                let sq = onto.filter(|_| mixed)?;
                let of = |c: Color| self.held.iter().rposition(|(h, t)| *h == hand && t.piece.color == c && reaches(t, sq));
                of(color).or_else(|| of(!color))
            })
            .or_else(|| self.held.iter().rposition(|(h, t)| *h == hand && t.piece.color == color))
            .or_else(|| self.held.iter().rposition(|(h, _)| *h == hand))
    }

    /// The index in `held` of the piece castling would put on `sq`, if `hand` holds `color`'s
    /// king and a rook.
    fn castling_piece(&self, hand: Hand, color: Color, sq: Square) -> Option<usize> {
        let find = |role: Role| self.held.iter().position(|(h, t)| *h == hand && t.piece == Piece { color, role });
        let (king, rook) = (find(Role::King)?, find(Role::Rook)?);
        let from = self.held[king].1.origin?;
        if sq.rank() != from.rank() {
            return None;
        }
        match sq.file().distance(from.file()) {
            2 => Some(king),
            1 => Some(rook),
            _ => None,
        }
    }

    /// Whether `hand` holds a piece.
    pub fn holds(&self, hand: Hand) -> bool {
        self.held.iter().any(|(h, _)| *h == hand)
    }

    /// Whether a hand of `side` holds one of `side`'s own pieces (a captured piece in the
    /// hand is as good as off the board).
    pub fn side_holds_own(&self, side: Color) -> bool {
        self.held.iter().any(|(h, t)| h.side == side && t.piece.color == side)
    }

    /// Forgets the pieces held by `side`'s hands, as if put aside off the board.
    pub fn drop_held(&mut self, side: Color) {
        self.held.retain(|(h, _)| h.side != side);
    }
}
