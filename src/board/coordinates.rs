//! The coordinates printed around a board's playing area: how well the letters a-h and digits
//! 1-8 seen in the border fit each of the board's four turns. Many boards print them along two
//! or four edges; they tell a board from its half turn where the position cannot (a pawnless
//! endgame, a study). Each border cell beside an edge square is matched against the glyph each
//! turn puts there, drawn in OpenCV's Hershey fonts at four sizes and facing either player as
//! that turn places them; light glyphs on dark wood match as well as dark ones on vinyl.

use opencv::core::{self, Mat, Rect};
use opencv::imgproc;
use opencv::prelude::*;

use super::{BoardError, Calibration, Found, Layout, Px, WhiteEdge};

/// Pixels a square in the warp the border is read from.
const SQUARE: i32 = 32;

/// Glyph heights tried, in pixels of [`SQUARE`]: from a fifth to two fifths of a square.
const HEIGHTS: [f64; 4] = [6.0, 8.0, 10.0, 13.0];

/// The Hershey fonts tried: sans-serif, plain, heavier and small.
const FONTS: [i32; 3] = [imgproc::FONT_HERSHEY_SIMPLEX, imgproc::FONT_HERSHEY_DUPLEX, imgproc::FONT_HERSHEY_PLAIN];

/// A coordinate printed in the border: a file's letter or a rank's digit, 0 to 7.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Glyph {
    File(usize),
    Rank(usize),
}

impl Glyph {
    /// The characters that print it.
    fn chars(self) -> &'static [&'static str] {
        const FILES: [[&str; 2]; 8] = [["a", "A"], ["b", "B"], ["c", "C"], ["d", "D"], ["e", "E"], ["f", "F"], ["g", "G"], ["h", "H"]];
        const RANKS: [[&str; 1]; 8] = [["1"], ["2"], ["3"], ["4"], ["5"], ["6"], ["7"], ["8"]];
        match self {
            Glyph::File(i) => &FILES[i],
            Glyph::Rank(i) => &RANKS[i],
        }
    }
}

/// A border cell of the warp, beside an edge square.
#[derive(Clone, Copy)]
struct Cell {
    rect: Rect,
    /// Along a horizontal edge (a column's coordinate), else along a vertical one (a row's).
    across: bool,
    /// The column (left to right) or row (top to bottom) it is beside.
    index: usize,
}

impl Cell {
    /// The coordinate printed here when the corners given are turned `turns` quarter turns (as
    /// `photo::locate` turns them: corners a8, h8, h1, a1 = grid[(i + turns) % 4], the grid in
    /// image order). With no turn a8 is top-left: columns are files a-h, rows ranks 8-1.
    fn glyph(self, turns: usize) -> Glyph {
        let (i, j) = (self.index, 7 - self.index);
        match (self.across, turns % 4) {
            (true, 0) => Glyph::File(i),
            (true, 1) => Glyph::Rank(i),
            (true, 2) => Glyph::File(j),
            (true, _) => Glyph::Rank(j),
            (false, 0) => Glyph::Rank(j),
            (false, 1) => Glyph::File(i),
            (false, 2) => Glyph::Rank(i),
            (false, _) => Glyph::File(j),
        }
    }
}

/// For each of the four turns of the playing area with corners `tl_tr_br_bl` (image order),
/// the summed match of the 32 border cells beside its edge squares with the coordinates that
/// turn prints there: each cell's best |normalised correlation| with the glyph, 0 to 1. A
/// board with printed coordinates scores its own turn highest; without, the four are close.
pub fn glyph_fit(image: &Mat, tl_tr_br_bl: [Px; 4]) -> Result<[f64; 4], BoardError> {
    let layout = Layout { square: SQUARE as u32, margin: SQUARE as u32 };
    let cal = Calibration::from_corners(String::new(), 0, [0, 0], tl_tr_br_bl, WhiteEdge::Bottom, Found::Auto)?;
    let warped = super::corners::grey(&cal.warp(image, layout)?)?;
    let (lo, hi) = (SQUARE, 9 * SQUARE);
    let mut cells = Vec::with_capacity(32);
    for k in 0..8 {
        let at = lo + k as i32 * SQUARE;
        cells.push(Cell { rect: Rect::new(at, hi, SQUARE, SQUARE), across: true, index: k });
        cells.push(Cell { rect: Rect::new(at, 0, SQUARE, SQUARE), across: true, index: k });
        cells.push(Cell { rect: Rect::new(0, at, SQUARE, SQUARE), across: false, index: k });
        cells.push(Cell { rect: Rect::new(hi, at, SQUARE, SQUARE), across: false, index: k });
    }
    let mut templates = Templates::default();
    let mut fit = [0.0; 4];
    for cell in cells {
        let patch = Mat::roi(&warped, cell.rect)?.try_clone()?;
        for (turns, total) in fit.iter_mut().enumerate() {
            // A coordinate faces one player or the other: upright or upside down in the warp
            // when White sits at its top or bottom, on its side when White sits at the left or
            // right.
            *total += templates.best_match(&patch, cell.glyph(turns), turns % 2 == 1)?;
        }
    }
    Ok(fit)
}

/// Each glyph's drawings, upright and upside down or on either side, made when first needed.
#[derive(Default)]
struct Templates {
    drawn: Vec<((Glyph, bool), Vec<Mat>)>,
}

impl Templates {
    /// The best |normalised correlation| anywhere in `patch` of `glyph`'s drawings, upright or
    /// upside down, or on either side when `sideways`.
    fn best_match(&mut self, patch: &Mat, glyph: Glyph, sideways: bool) -> Result<f64, BoardError> {
        let key = (glyph, sideways);
        if !self.drawn.iter().any(|(k, _)| *k == key) {
            self.drawn.push((key, draw(glyph, sideways)?));
        }
        let drawings = &self.drawn.iter().find(|(k, _)| *k == key).expect("drawn above").1;
        let mut best = 0.0f64;
        let mut result = Mat::default();
        for t in drawings {
            if t.rows() > patch.rows() || t.cols() > patch.cols() {
                continue;
            }
            imgproc::match_template(patch, t, &mut result, imgproc::TM_CCOEFF_NORMED, &core::no_array())?;
            let (mut min, mut max) = (0.0, 0.0);
            core::min_max_loc(&result, Some(&mut min), Some(&mut max), None, None, &core::no_array())?;
            // A flat patch has no correlation to speak of (OpenCV may give NaN or 1 there).
            let m = min.abs().max(max.abs());
            if m.is_finite() && m < 1.0 - 1e-6 {
                best = best.max(m);
            }
        }
        Ok(best)
    }
}

/// `glyph` in every font and height, upright and upside down (or turned either way a quarter
/// when `sideways`): dark on light, with a stroke's margin.
fn draw(glyph: Glyph, sideways: bool) -> Result<Vec<Mat>, BoardError> {
    let mut out = Vec::new();
    for text in glyph.chars() {
        for font in FONTS {
            for height in HEIGHTS {
                let mut baseline = 0;
                let unit = imgproc::get_text_size(text, font, 1.0, 1, &mut baseline)?;
                let scale = height / f64::from(unit.height);
                let thickness = ((height / 10.0).round() as i32).max(1);
                let size = imgproc::get_text_size(text, font, scale, thickness, &mut baseline)?;
                let pad = thickness + 1;
                let mut upright = Mat::new_rows_cols_with_default(size.height + 2 * pad, size.width + 2 * pad, core::CV_8UC1, core::Scalar::all(255.0))?;
                let origin = core::Point::new(pad, size.height + pad);
                imgproc::put_text(&mut upright, text, origin, font, scale, core::Scalar::all(0.0), thickness, imgproc::LINE_AA, false)?;
                let turns = if sideways { [core::ROTATE_90_CLOCKWISE, core::ROTATE_90_COUNTERCLOCKWISE] } else { [core::ROTATE_180, -1] };
                for turn in turns {
                    if turn < 0 {
                        out.push(upright.clone());
                    } else {
                        let mut turned = Mat::default();
                        core::rotate(&upright, &mut turned, turn)?;
                        out.push(turned);
                    }
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_turn_prints_each_coordinate_once_around_the_board() {
        for turns in 0..4 {
            let mut seen = Vec::new();
            for across in [true, false] {
                for index in 0..8 {
                    seen.push(Cell { rect: Rect::default(), across, index }.glyph(turns));
                }
            }
            for k in 0..8 {
                assert_eq!(seen.iter().filter(|g| **g == Glyph::File(k)).count(), 1, "turn {turns}, file {k}");
                assert_eq!(seen.iter().filter(|g| **g == Glyph::Rank(k)).count(), 1, "turn {turns}, rank {k}");
            }
        }
    }

    #[test]
    fn a_drawn_border_is_read_the_right_way_round() -> Result<(), BoardError> {
        // A light board of 8 x 8 squares of 40 px in a 440 px picture (the playing area from 40
        // to 360, off centre), its letters printed below and its digits at the left, as White
        // sees them.
        let mut image = Mat::new_rows_cols_with_default(440, 440, core::CV_8UC3, core::Scalar::all(220.0))?;
        let (origin, s) = (40, 40);
        for k in 0..8 {
            let letter = ["a", "b", "c", "d", "e", "f", "g", "h"][k];
            let digit = ["8", "7", "6", "5", "4", "3", "2", "1"][k];
            let ink = core::Scalar::all(30.0);
            let at = origin + k as i32 * s;
            imgproc::put_text(&mut image, letter, core::Point::new(at + 14, origin + 8 * s + 26), imgproc::FONT_HERSHEY_SIMPLEX, 0.6, ink, 2, imgproc::LINE_AA, false)?;
            imgproc::put_text(&mut image, digit, core::Point::new(origin - 26, at + 28), imgproc::FONT_HERSHEY_SIMPLEX, 0.6, ink, 2, imgproc::LINE_AA, false)?;
        }
        let (a, b) = (f64::from(origin), f64::from(origin + 8 * s));
        let fit = glyph_fit(&image, [Px { x: a, y: a }, Px { x: b, y: a }, Px { x: b, y: b }, Px { x: a, y: b }])?;
        for turns in 1..4 {
            assert!(fit[0] > fit[turns] + 1.0, "{fit:?}");
        }
        Ok(())
    }
}
