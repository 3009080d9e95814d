//! Which way round a board lies, read from its pictures alone: White's edge from the start
//! position's colours (the two bands of pieces two squares deep along opposite edges, the
//! lighter band White's), and which diagonal the light squares take (Law 2.1: a light square at
//! each player's right), which tells a board from its quarter turns.

use opencv::core::Mat;
use opencv::prelude::*;

use super::{BoardError, Calibration, Found, Layout, Px, WhiteEdge};

/// How much more a band's square centres must differ from empty squares than the bands on the
/// other axis, in grey levels, before pieces are taken to stand there.
const MIN_PIECE_CONTRAST: f64 = 8.0;

/// Reads White's edge from an image of the start position, given the playing area's corners
/// in image order (top-left, top-right, bottom-right, bottom-left); `None` if the image shows
/// no two opposite bands of pieces.
pub fn white_edge(image: &Mat, tl_tr_br_bl: [Px; 4]) -> Result<Option<WhiteEdge>, BoardError> {
    let layout = Layout { square: 32, margin: 0 };
    let cal = Calibration::from_corners(String::new(), 0, [0, 0], tl_tr_br_bl, WhiteEdge::Bottom, Found::Auto)?;
    let warped = super::corners::grey(&cal.warp(image, layout)?)?;
    // Per square (row, column as seen in the image): mean of the centre disc and of the rim.
    let s = layout.square as i32;
    let mut centre = [[0.0f64; 8]; 8];
    let mut rim = [[0.0f64; 8]; 8];
    for r in 0..8 {
        for c in 0..8 {
            let (mut sc, mut nc, mut sr, mut nr) = (0.0, 0.0, 0.0, 0.0);
            for y in 0..s {
                for x in 0..s {
                    let (dx, dy) = (f64::from(x) - f64::from(s) / 2.0, f64::from(y) - f64::from(s) / 2.0);
                    let d = (dx * dx + dy * dy).sqrt() / f64::from(s);
                    let v = f64::from(*warped.at_2d::<u8>(r * s + y, c * s + x)?);
                    if d < 0.25 {
                        sc += v;
                        nc += 1.0;
                    } else if d > 0.42 && dx.abs() < f64::from(s) / 2.0 - 2.0 && dy.abs() < f64::from(s) / 2.0 - 2.0 {
                        sr += v;
                        nr += 1.0;
                    }
                }
            }
            centre[r as usize][c as usize] = sc / nc;
            rim[r as usize][c as usize] = sr / nr;
        }
    }
    // A band: the 16 squares two deep along one edge.
    let band = |edge: WhiteEdge| -> Vec<(usize, usize)> {
        (0..8)
            .flat_map(|i| {
                (0..2).map(move |d| match edge {
                    WhiteEdge::Top => (d, i),
                    WhiteEdge::Bottom => (7 - d, i),
                    WhiteEdge::Left => (i, d),
                    WhiteEdge::Right => (i, 7 - d),
                })
            })
            .collect()
    };
    let contrast = |edge| band(edge).iter().map(|&(r, c)| (centre[r][c] - rim[r][c]).abs()).sum::<f64>() / 16.0;
    let lightness = |edge| band(edge).iter().map(|&(r, c)| centre[r][c]).sum::<f64>() / 16.0;
    let vertical = contrast(WhiteEdge::Top) + contrast(WhiteEdge::Bottom);
    let horizontal = contrast(WhiteEdge::Left) + contrast(WhiteEdge::Right);
    let (a, b) = if vertical > horizontal { (WhiteEdge::Bottom, WhiteEdge::Top) } else { (WhiteEdge::Left, WhiteEdge::Right) };
    if (vertical - horizontal).abs() / 2.0 < MIN_PIECE_CONTRAST {
        return Ok(None);
    }
    Ok(Some(if lightness(a) >= lightness(b) { a } else { b }))
}

/// How plainly the light squares of the playing area with corners a8, h8, h1, a1 in `image` are
/// those of a board set up by Law 2.1 (h1 and a8 light, a1 and h8 dark): the difference between
/// the median greys of the light and the dark squares, over the spread of all 64, each square
/// read on its rim (pieces stand in the middle). About 2 for a board set up so, about -2 for a
/// quarter turn of it, near 0 where no chequer is seen.
pub fn chequer(image: &Mat, a8_h8_h1_a1: [Px; 4]) -> Result<f64, BoardError> {
    let layout = Layout { square: 32, margin: 0 };
    let cal = Calibration::from_corners(String::new(), 0, [0, 0], a8_h8_h1_a1, WhiteEdge::Bottom, Found::Auto)?;
    let warped = super::corners::grey(&cal.warp(image, layout)?)?;
    let s = layout.square as i32;
    let (mut light, mut dark) = (Vec::new(), Vec::new());
    for r in 0..8 {
        for c in 0..8 {
            let mut rim = Vec::new();
            for y in 0..s {
                for x in 0..s {
                    if x < s / 4 || x >= s - s / 4 || y < s / 4 || y >= s - s / 4 {
                        rim.push(f64::from(*warped.at_2d::<u8>(r * s + y, c * s + x)?));
                    }
                }
            }
            // Row r is rank 8 - r, column c file c: a1 (row 7, column 0) is dark.
            if (r + c) % 2 == 0 { light.push(median(&mut rim)) } else { dark.push(median(&mut rim)) }
        }
    }
    let all: Vec<f64> = light.iter().chain(&dark).copied().collect();
    let mean = all.iter().sum::<f64>() / 64.0;
    let spread = (all.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / 64.0).sqrt();
    if spread < 1e-6 {
        return Ok(0.0);
    }
    Ok((median(&mut light) - median(&mut dark)) / spread)
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 { values[n / 2] } else { (values[n / 2 - 1] + values[n / 2]) / 2.0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opencv::core::{CV_8UC3, Point, Rect, Scalar};
    use opencv::imgproc;

    /// A 480 px board seen from above, a1 at the bottom left, with a light or dark disc (a
    /// piece) on every other square.
    fn board(a1_dark: bool) -> Mat {
        let mut img = Mat::new_rows_cols_with_default(480, 480, CV_8UC3, Scalar::all(0.0)).unwrap();
        for row in 0..8 {
            for col in 0..8 {
                // Row 7, column 0 is a1.
                let dark = ((row + col) % 2 == 1) == a1_dark;
                let v = if dark { 70.0 } else { 200.0 };
                imgproc::rectangle(&mut img, Rect::new(col * 60, row * 60, 60, 60), Scalar::all(v), -1, imgproc::LINE_8, 0).unwrap();
                if (row * 8 + col) % 2 == 0 {
                    let piece = if row < 4 { 20.0 } else { 240.0 };
                    imgproc::circle(&mut img, Point::new(col * 60 + 30, row * 60 + 30), 18, Scalar::all(piece), -1, imgproc::LINE_AA, 0).unwrap();
                }
            }
        }
        img
    }

    const A8_H8_H1_A1: [Px; 4] = [Px { x: 0.0, y: 0.0 }, Px { x: 480.0, y: 0.0 }, Px { x: 480.0, y: 480.0 }, Px { x: 0.0, y: 480.0 }];

    #[test]
    fn the_chequer_tells_a_board_set_up_by_law_2_1_from_its_quarter_turns() {
        let set_up = board(true);
        assert!(chequer(&set_up, A8_H8_H1_A1).unwrap() > 1.8);
        // The same corners a quarter turn round: a1 is now a light square.
        let turned: [Px; 4] = std::array::from_fn(|i| A8_H8_H1_A1[(i + 1) % 4]);
        assert!(chequer(&set_up, turned).unwrap() < -1.8);
        // A half turn keeps the diagonal.
        let half: [Px; 4] = std::array::from_fn(|i| A8_H8_H1_A1[(i + 2) % 4]);
        assert!(chequer(&set_up, half).unwrap() > 1.8);
        // A board set up with a dark square at the right reads as a quarter turn does.
        assert!(chequer(&board(false), A8_H8_H1_A1).unwrap() < -1.8);
    }

    #[test]
    fn no_chequer_reads_zero() {
        let flat = Mat::new_rows_cols_with_default(480, 480, CV_8UC3, Scalar::all(128.0)).unwrap();
        assert_eq!(chequer(&flat, A8_H8_H1_A1).unwrap(), 0.0);
    }
}
