//! Which edge White sits at, read from the start position's colours: the two bands of pieces
//! two squares deep along opposite edges, the lighter band White's.

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
