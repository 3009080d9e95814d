//! Learning the set from a reference image whose position is known: the board is read several
//! times, its corners jittered by a fraction of a square, and a [`SetCorrection`] is fitted on
//! the squares. A reference with hands over the board, or that does not show its position, is
//! refused, naming the squares.

use opencv::core::Mat;
use opencv::prelude::MatTraitConst;
use shakmaty::{Board, Color, Square};

use super::PhotoError;
use crate::board::{Calibration, Found, Px, WhiteEdge};
use crate::detect::adapt::Sample;
use crate::detect::reading::piece_class;
use crate::detect::{Look, Model, SetCorrection};

/// Corner offsets of the reads, in squares (x, y for each corner a8, h8, h1, a1): the unjittered
/// read first. Copies of a square read at other offsets share its cross-validation fold.
const JITTERS: [[(f64, f64); 4]; 5] = [
    [(0.0, 0.0); 4],
    [(0.06, 0.0), (0.0, 0.06), (-0.06, 0.0), (0.0, -0.06)],
    [(-0.06, 0.03), (0.03, -0.06), (0.06, 0.03), (-0.03, 0.06)],
    [(0.0, -0.06), (-0.06, 0.0), (0.0, 0.06), (0.06, 0.0)],
    [(0.04, 0.04), (-0.04, 0.04), (-0.04, -0.04), (0.04, -0.04)],
];

/// A square more covered than this has a hand over it.
const HAND_COVER: f32 = 0.3;

/// A square whose reading gives the position's kind (empty, White, Black) less than this
/// contradicts the position.
const CONTRADICTS: f32 = 0.02;

/// Contradicting squares tolerated as misreads for the correction to learn: a move changes two.
const TOLERATED: usize = 1;

/// Learns the set in `image`, whose playing area has corners a8, h8, h1, a1 and shows `board`.
pub fn learn(model: &mut Model, image: &Mat, corners: [Px; 4], board: &Board, reference: String) -> Result<SetCorrection, PhotoError> {
    let looks = looks(model, image, corners)?;
    learn_from(model.fingerprint(), &looks, board, reference)
}

/// The reads a set is learnt from: the playing area with corners a8, h8, h1, a1 in `image`,
/// read without the set correction, at each of the five corner placings of `JITTERS` (the
/// unjittered read first).
pub fn looks(model: &mut Model, image: &Mat, corners: [Px; 4]) -> Result<Vec<Look>, PhotoError> {
    if !model.has_features() {
        return Err(PhotoError::NoFeatures);
    }
    let size = [image.cols().max(0) as u32, image.rows().max(0) as u32];
    let square = (corners[0].x - corners[2].x).hypot(corners[0].y - corners[2].y) / (8.0 * std::f64::consts::SQRT_2);
    JITTERS
        .iter()
        .map(|jitter| {
            let moved: [Px; 4] = std::array::from_fn(|i| Px { x: corners[i].x + jitter[i].0 * square, y: corners[i].y + jitter[i].1 * square });
            let cal = Calibration::from_corners(String::new(), 0, size, moved, WhiteEdge::Bottom, Found::Given)?;
            Ok(model.look(&cal.warp(image, model.layout())?)?)
        })
        .collect()
}

/// Learns the set for the model `fingerprint` names from its [`looks`] at a board showing
/// `board`; refused where the first look has hands over the board or contradicts `board`.
pub fn learn_from(fingerprint: &str, looks: &[Look], board: &Board, reference: String) -> Result<SetCorrection, PhotoError> {
    if let Some(first) = looks.first() {
        check(&first.reading, board)?;
    }
    let samples: Vec<Sample> = looks
        .iter()
        .flat_map(|look| {
            Square::ALL.into_iter().map(|sq| Sample {
                classes: look.reading.square(sq).classes,
                features: look.features[sq as usize].clone(),
                class: piece_class(board.piece_at(sq)),
                fold: usize::from(sq.file()) + usize::from(sq.rank()),
            })
        })
        .collect();
    Ok(SetCorrection::learn(fingerprint, &samples, reference))
}

/// Refuses a reading with hands over the board, or one that contradicts `board` on more squares
/// than a misread explains.
pub fn check(reading: &crate::detect::Reading, board: &Board) -> Result<(), PhotoError> {
    let covered: Vec<Square> = Square::ALL.into_iter().filter(|&sq| reading.square(sq).cover > HAND_COVER).collect();
    if !covered.is_empty() {
        return Err(PhotoError::HandsOver(names(&covered)));
    }
    let contradicting: Vec<Square> = Square::ALL
        .into_iter()
        .filter(|&sq| {
            let s = reading.square(sq);
            let p = match board.piece_at(sq) {
                None => s.classes[0],
                Some(piece) => s.color(piece.color),
            };
            p < CONTRADICTS
        })
        .collect();
    if contradicting.len() > TOLERATED {
        let detail: Vec<String> = contradicting
            .iter()
            .map(|&sq| {
                let want = board.piece_at(sq).map_or("empty".to_owned(), |p| format!("{} {:?}", if p.color == Color::White { "White's" } else { "Black's" }, p.role).to_lowercase());
                format!("{sq} ({want} in the position, {} read)", super::class_letter(piece_class(super::board_of(reading).piece_at(sq))))
            })
            .collect();
        return Err(PhotoError::NotThePosition(detail.join(", ")));
    }
    Ok(())
}

fn names(squares: &[Square]) -> String {
    squares.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(" ")
}
