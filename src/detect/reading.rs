//! What the board model says about one frame: per square, the piece class, how much of the
//! square a hand covers and whether a hand touches the piece there; and a coarse map of where
//! each player's hands and arms are. This is the contract between `detect` and `track`.

use shakmaty::{Color, Piece, Role, Square};

/// The model's 13 classes per square: 0 = empty, 1..=6 White's pawn, knight, bishop, rook,
/// queen, king; 7..=12 Black's in the same order.
pub const CLASSES: usize = 13;

const ROLES: [Role; 6] = [Role::Pawn, Role::Knight, Role::Bishop, Role::Rook, Role::Queen, Role::King];

/// The piece a class index stands for (`None` for 0, empty, and for indices out of range).
pub fn class_piece(class: usize) -> Option<Piece> {
    match class {
        1..=6 => Some(Piece { color: Color::White, role: ROLES[class - 1] }),
        7..=12 => Some(Piece { color: Color::Black, role: ROLES[class - 7] }),
        _ => None,
    }
}

/// The class index of a square's content (0 for an empty square).
pub fn piece_class(piece: Option<Piece>) -> usize {
    match piece {
        None => 0,
        Some(p) => {
            let role = ROLES.iter().position(|r| *r == p.role).unwrap_or(0);
            1 + role + if p.color == Color::Black { 6 } else { 0 }
        }
    }
}

/// The model's view of one square.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SquareReading {
    /// Probability of each class (see [`CLASSES`]); they sum to 1.
    pub classes: [f32; CLASSES],
    /// Fraction of the square hidden by a hand, forearm or sleeve, 0 to 1.
    pub cover: f32,
    /// Probability that a hand is in contact with the piece on this square.
    pub contact: f32,
}

impl SquareReading {
    /// The most likely content and its probability.
    pub fn best(&self) -> (Option<Piece>, f32) {
        let (class, p) = self
            .classes
            .iter()
            .enumerate()
            .fold((0, f32::MIN), |best, (i, &p)| if p > best.1 { (i, p) } else { best });
        (class_piece(class), p)
    }

    /// Probability that some piece stands here.
    pub fn occupied(&self) -> f32 {
        1.0 - self.classes[0]
    }

    /// Probability that a piece of `color` stands here.
    pub fn color(&self, color: Color) -> f32 {
        let start = if color == Color::White { 1 } else { 7 };
        self.classes[start..start + 6].iter().sum()
    }
}

/// Where hands are: for each cell of a coarse grid over the warped board (margin included),
/// the probability that White's, and Black's, hands or arms are there. In the warped image
/// White sits at the bottom (row `side - 1`) and the a-file is on the left.
#[derive(Clone, Debug, PartialEq)]
pub struct HandMap {
    /// Cells per side of the grid.
    pub side: usize,
    /// Cells per board square along each axis.
    pub cells_per_square: usize,
    /// Cells of margin around the playing area on each edge.
    pub margin: usize,
    /// White's hands, row-major, `side * side` values in 0..1.
    pub white: Vec<f32>,
    /// Black's hands, row-major, `side * side` values in 0..1.
    pub black: Vec<f32>,
}

impl HandMap {
    /// The probability map of `color`'s hands.
    pub fn of(&self, color: Color) -> &[f32] {
        match color {
            Color::White => &self.white,
            Color::Black => &self.black,
        }
    }

    /// The cell rows and columns (half-open ranges) covering `sq`.
    pub fn cells(&self, sq: Square) -> (std::ops::Range<usize>, std::ops::Range<usize>) {
        let row = 7 - usize::from(sq.rank());
        let col = usize::from(sq.file());
        let n = self.cells_per_square;
        let r0 = self.margin + row * n;
        let c0 = self.margin + col * n;
        (r0..r0 + n, c0..c0 + n)
    }

    /// The square under cell (`row`, `col`), if the cell lies on the playing area.
    pub fn square_at(&self, row: usize, col: usize) -> Option<Square> {
        let n = self.cells_per_square;
        let (r, c) = (row.checked_sub(self.margin)? / n, col.checked_sub(self.margin)? / n);
        if r >= 8 || c >= 8 {
            return None;
        }
        Some(Square::from_coords(shakmaty::File::new(c as u32), shakmaty::Rank::new(7 - r as u32)))
    }
}

/// The model's reading of one frame.
#[derive(Clone, Debug, PartialEq)]
pub struct Reading {
    /// The frame's index in its source (0-based).
    pub frame: u64,
    /// The frame's time in seconds from the start of the source.
    pub t: f64,
    /// Per square, indexed by `Square as usize` (a1 = 0, h8 = 63).
    pub squares: [SquareReading; 64],
    /// Where the hands are.
    pub hands: HandMap,
}

impl Reading {
    /// The reading of one square.
    pub fn square(&self, sq: Square) -> &SquareReading {
        &self.squares[sq as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_round_trip() {
        assert_eq!(piece_class(None), 0);
        for class in 1..CLASSES {
            assert_eq!(piece_class(class_piece(class)), class);
        }
        assert_eq!(class_piece(1), Some(Color::White.pawn()));
        assert_eq!(class_piece(12), Some(Color::Black.king()));
        assert_eq!(class_piece(13), None);
    }

    #[test]
    fn hand_cells_follow_the_warp() {
        let map = HandMap { side: 54, cells_per_square: 6, margin: 3, white: vec![0.0; 54 * 54], black: vec![0.0; 54 * 54] };
        assert_eq!(map.cells(Square::A8), (3..9, 3..9));
        assert_eq!(map.cells(Square::H1), (45..51, 45..51));
        assert_eq!(map.square_at(3, 3), Some(Square::A8));
        assert_eq!(map.square_at(50, 50), Some(Square::H1));
        assert_eq!(map.square_at(2, 10), None);
        assert_eq!(map.square_at(51, 10), None);
    }
}
