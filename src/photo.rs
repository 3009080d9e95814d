//! Still photos: where the board is, which way round it lies, and the position the model reads
//! on it. Behind `touchmove recognise` and `touchmove eval-photos`.

use opencv::core::Mat;
use opencv::prelude::MatTraitConst;
use shakmaty::{Board, Color, Square};

use crate::board::{Calibration, Found, Px, WhiteEdge, corners};
use crate::detect::{DetectError, Model, Reading, reading::class_piece};

/// What can go wrong reading a photo.
#[derive(Debug, thiserror::Error)]
pub enum PhotoError {
    /// No board was found and no corners were given.
    #[error("no board found; give its corners (a8, h8, h1, a1) with --corners")]
    NoBoard,
    /// Locating or warping the board failed.
    #[error(transparent)]
    Board(#[from] crate::board::BoardError),
    /// The model failed.
    #[error(transparent)]
    Detect(#[from] DetectError),
}

/// How the photo's board was turned to put White at the bottom.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Orientation {
    /// The corners were given as a8, h8, h1, a1: nothing to decide.
    Given,
    /// Read from the position: White's pieces lie towards White's edge. `quarter_turns` of the
    /// image-order corners (top-left first) were needed.
    FromPieces {
        /// Quarter turns applied.
        quarter_turns: usize,
    },
}

/// A photo read by the model.
#[derive(Debug)]
pub struct Recognised {
    /// The playing area's corners a8, h8, h1, a1 in the photo.
    pub corners: [Px; 4],
    /// How the orientation was settled.
    pub orientation: Orientation,
    /// The model's reading.
    pub reading: Reading,
    /// The most likely position.
    pub board: Board,
}

/// Reads a photo. `corners` are a8, h8, h1, a1 when given; otherwise the board is found and
/// turned so that White's pieces lie towards the bottom.
pub fn recognise(model: &mut Model, image: &Mat, corners: Option<[Px; 4]>) -> Result<Recognised, PhotoError> {
    let (tl_tr_br_bl, given) = match corners {
        Some(c) => (c, true),
        None => (corners::find(image)?.ok_or(PhotoError::NoBoard)?, false),
    };
    recognise_with(model, image, tl_tr_br_bl, given)
}

/// Reads a photo whose playing area has these corners: a8, h8, h1, a1 when `oriented`, else in
/// image order (top-left, top-right, bottom-right, bottom-left) with the orientation to be read
/// from the pieces.
pub fn recognise_with(model: &mut Model, image: &Mat, corners: [Px; 4], oriented: bool) -> Result<Recognised, PhotoError> {
    let read = |model: &mut Model, corners: [Px; 4]| -> Result<Reading, PhotoError> {
        let size = [image.cols().max(0) as u32, image.rows().max(0) as u32];
        let cal = Calibration::from_corners(String::new(), 0, size, corners, WhiteEdge::Bottom, Found::Given)?;
        let warped = cal.warp(image, model.layout())?;
        Ok(model.read(&warped, 0, 0.0)?)
    };
    let reading = read(model, corners)?;
    if oriented {
        let board = board_of(&reading);
        return Ok(Recognised { corners, orientation: Orientation::Given, reading, board });
    }
    // The reading of the image-order warp, turned: a quarter turn relabels the corners.
    let turns = (0..4).max_by(|&a, &b| white_lead(&reading, a).total_cmp(&white_lead(&reading, b))).unwrap_or(0);
    let corners: [Px; 4] = std::array::from_fn(|i| corners[(i + turns) % 4]);
    let reading = if turns == 0 { reading } else { read(model, corners)? };
    let board = board_of(&reading);
    Ok(Recognised { corners, orientation: Orientation::FromPieces { quarter_turns: turns }, reading, board })
}

/// How far White's pieces sit nearer the bottom than Black's, in ranks, if the warp of the
/// image-order corners were turned by `turns` quarter turns.
fn white_lead(reading: &Reading, turns: usize) -> f32 {
    let mut sum = [0.0f32; 2];
    let mut weight = [0.0f32; 2];
    for sq in Square::ALL {
        // (row from top, column) of the square in the unturned warp
        let (row, col) = (7 - i32::from(sq.rank()), i32::from(sq.file()));
        // after `turns` quarter turns, how far down is it?
        let down = match turns {
            0 => row,
            1 => 7 - col,
            2 => 7 - row,
            _ => col,
        } as f32;
        let s = reading.square(sq);
        for (k, color) in [Color::White, Color::Black].into_iter().enumerate() {
            sum[k] += s.color(color) * down;
            weight[k] += s.color(color);
        }
    }
    let mean = |k: usize| if weight[k] > 0.5 { sum[k] / weight[k] } else { 3.5 };
    mean(0) - mean(1)
}

/// The most likely position of a reading.
pub fn board_of(reading: &Reading) -> Board {
    let mut board = Board::empty();
    for sq in Square::ALL {
        if let (Some(piece), _) = reading.square(sq).best() {
            board.set_piece_at(sq, piece);
        }
    }
    board
}

/// The classes of a board, indexed by square.
pub fn classes_of(board: &Board) -> [usize; 64] {
    std::array::from_fn(|sq| crate::detect::reading::piece_class(board.piece_at(Square::new(sq as u32))))
}

/// The piece for a class index, as a FEN letter (`.` for empty).
pub fn class_letter(class: usize) -> char {
    class_piece(class).map_or('.', |p| p.char())
}
