//! Still photos: where the board is, which way round it lies, and the position the model reads
//! on it. Behind `touchmove recognise` and `touchmove eval-photos`.

pub mod locate;
pub mod position;
pub mod reference;

use opencv::core::Mat;
use opencv::prelude::MatTraitConst;
use shakmaty::{Board, Square};

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
    /// A reference image with hands over the board.
    #[error("the reference has hands over the board (squares {0}); take a frame with no hands")]
    HandsOver(String),
    /// A reference image that does not show its position.
    #[error("the reference does not show its position: {0}")]
    NotThePosition(String),
    /// The model cannot learn a set.
    #[error("this board model has no features output, so no set can be learnt with it")]
    NoFeatures,
}

/// How the photo's board and its orientation were settled.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Orientation {
    /// The corners were given as a8, h8, h1, a1, and taken as they are.
    Given,
    /// The corners were given as a8, h8, h1, a1 and their order checked against the photo (see
    /// [`locate::check_order`]).
    Checked {
        /// Quarter turns applied to the given order (0: it was kept).
        turns: usize,
        /// The probability that the order taken is right.
        sure: f64,
    },
    /// Chosen among grids and their four orientations by how well a position explains the
    /// reading (see [`locate`]).
    Chosen {
        /// The probability that the choice is right, among those tried.
        sure: f64,
        /// Grid and orientation pairs tried.
        tried: usize,
    },
}

/// A photo read by the model.
#[derive(Debug)]
pub struct Recognised {
    /// The playing area's corners a8, h8, h1, a1 in the photo.
    pub corners: [Px; 4],
    /// How the corners and orientation were settled.
    pub orientation: Orientation,
    /// The model's reading.
    pub reading: Reading,
    /// The most likely position.
    pub board: Board,
}

/// Reads a photo. `corners` are a8, h8, h1, a1 when given (their order checked); otherwise the
/// board is found and its orientation chosen, against `known` when the position is known.
pub fn recognise(model: &mut Model, image: &Mat, corners: Option<[Px; 4]>, known: Option<&Board>) -> Result<Recognised, PhotoError> {
    match corners {
        Some(corners) => recognise_given(model, image, corners),
        None => Ok(chosen(locate::locate(model, image, known)?)),
    }
}

/// Reads a photo whose playing area's corners were given as a8, h8, h1, a1, moving them onto the
/// board's grid lines where they miss them ([`corners::snap`]) and turning them where the photo
/// shows they start at the wrong corner ([`locate::check_order`]).
pub fn recognise_given(model: &mut Model, image: &Mat, a8_h8_h1_a1: [Px; 4]) -> Result<Recognised, PhotoError> {
    let a8_h8_h1_a1 = corners::snap(image, a8_h8_h1_a1)?;
    let (located, turns) = locate::check_order(model, image, a8_h8_h1_a1, None)?;
    if turns != 0 {
        tracing::warn!(turns, sure = located.sure, "the corners given start at the wrong corner: read turned {turns} quarter turn(s)");
    }
    let board = board_of(&located.reading);
    Ok(Recognised { corners: located.corners, orientation: Orientation::Checked { turns, sure: located.sure }, reading: located.reading, board })
}

/// Reads a photo whose playing area has these corners (moved onto the grid lines where they miss
/// them, [`corners::snap`]): a8, h8, h1, a1 when `oriented`, else in image order (top-left,
/// top-right, bottom-right, bottom-left) with the orientation to be chosen.
pub fn recognise_with(model: &mut Model, image: &Mat, corners: [Px; 4], oriented: bool) -> Result<Recognised, PhotoError> {
    let corners = corners::snap(image, corners)?;
    if !oriented {
        return Ok(chosen(locate::locate_among(model, image, &[corners], None)?));
    }
    let size = [image.cols().max(0) as u32, image.rows().max(0) as u32];
    let cal = Calibration::from_corners(String::new(), 0, size, corners, WhiteEdge::Bottom, Found::Given)?;
    let reading = model.read(&cal.warp(image, model.layout())?, 0, 0.0)?;
    let board = board_of(&reading);
    Ok(Recognised { corners, orientation: Orientation::Given, reading, board })
}

fn chosen(located: locate::Located) -> Recognised {
    let board = board_of(&located.reading);
    Recognised { corners: located.corners, orientation: Orientation::Chosen { sure: located.sure, tried: located.tried }, reading: located.reading, board }
}

/// The most likely position of a reading that a game can show (see [`position`]).
pub fn board_of(reading: &Reading) -> Board {
    position::likeliest(reading).0
}

/// The classes of a board, indexed by square.
pub fn classes_of(board: &Board) -> [usize; 64] {
    std::array::from_fn(|sq| crate::detect::reading::piece_class(board.piece_at(Square::new(sq as u32))))
}

/// The piece for a class index, as a FEN letter (`.` for empty).
pub fn class_letter(class: usize) -> char {
    class_piece(class).map_or('.', |p| p.char())
}
