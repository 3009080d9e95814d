//! Finding the playing area in an image without help: OpenCV's sector-based chessboard
//! detector finds a block of corners (the whole 7x7 inner grid on an empty board, a 7x3 or 7x5
//! band where pieces hide the rest); a block whose corners do not lie on a lattice, or whose
//! lattice's junctions do not alternate as a chessboard's, or show between its lines (a lattice
//! of some of the board's lines, sheared along a diagonal), is rejected; the block is then placed
//! on the board's 9x9 grid lines at each offset, each placement refitted to every inner corner
//! that shows an X-junction (not only the block's), and the one kept where the most X-junctions
//! of a chessboard are seen at the 49 inner corners and the least chequer just outside the
//! board. Several detector settings and image scales are tried in turn, and a grid found in a
//! shrunk picture is refitted in the full one.
//!
//! Where the detector finds no block (pieces on every band of ranks), the board's outline is
//! used: the large four-sided contours of the image (a board's edge, the line around its playing
//! area, the frame itself for a board that fills it), each tried with a printed border of several
//! widths, refitted to the inner corners and kept when its X-junctions are those of a board.
//! Where that fails too (a blurred board, pieces across its edge), the blocks refused for
//! straying from a lattice by up to a third of a square are placed and refitted, and kept on the
//! same test.
//!
//! [`candidates`] keeps every distinct grid it meets, across scales and placements whose
//! junctions come close to the best, for a reader that can tell a chess position from a shifted
//! grid (`photo::locate`) to choose among.

use opencv::core::{Mat, Point2f, Size, Vector};
use opencv::prelude::*;
use opencv::{calib3d, imgproc};

use super::{BoardError, Homography, Px};

/// Blocks of corners tried, largest first (columns, rows).
const PATTERNS: [(i32, i32); 5] = [(7, 7), (7, 5), (5, 7), (7, 3), (3, 7)];

/// Detector settings tried in turn: they fail on different boards.
const FLAGS: [i32; 4] = [
    calib3d::CALIB_CB_ACCURACY,
    calib3d::CALIB_CB_NORMALIZE_IMAGE | calib3d::CALIB_CB_ACCURACY,
    0,
    calib3d::CALIB_CB_EXHAUSTIVE | calib3d::CALIB_CB_ACCURACY,
];

/// The long sides images are scaled down to before searching, in pixels, in the order tried: the
/// detector's sectors fit some boards only at some scales.
const SEARCH_SIDES: [f64; 4] = [800.0, 1000.0, 600.0, 1300.0];

/// A picture whose long side is shorter is searched last scaled up to this side: the detector
/// misses some boards of 25 to 35 px a square (a board over a third of a 640 x 480 frame, a noisy
/// one) that it finds enlarged. It is tried last because it costs most where there is no board
/// (a 640 x 480 picture takes about 8 s to refuse, against 5; the drift check pays it too).
const UPSCALED_SIDE: f64 = 1024.0;

/// The largest error, in squares, of a found block's corner against a perfect lattice.
const MAX_LATTICE_ERROR: f64 = 0.15;
/// The same for a block tried only where no board is found otherwise: on a blurred board, or
/// one whose edge pieces stand across, the detector's corners can stray a third of a square,
/// and the refit still pulls them onto the junctions. Such a block must then show a board's
/// junctions ([`MIN_JUNCTIONS`]), as a grid found without a detector does.
const LOOSE_LATTICE_ERROR: f64 = 0.35;
/// The share of a found block's corners that must lie on a perfect lattice for it to be a
/// board's: a 7 x 3 block may have two corners beside pieces, a 7 x 7 one four.
const LATTICE_SHARE: f64 = 0.9;

/// The least share of a placed block's X-junction contrast that must alternate as a
/// chessboard's does ([`alternation`]): the detector can return a block whose columns are two
/// squares apart, which a perfect lattice fits as well.
const ALTERNATION: f64 = 0.9;

/// The most X-junction contrast a board's grid may show between its lines, as a share of that
/// on them ([`between_lines`]): a board's grids read 0.06 to 0.21 (the labelled photos and 187
/// renders), grids whose lines skip some of the board's about 0.8.
const BETWEEN_LINES: f64 = 0.5;

/// Rounds of refitting the grid to the inner corners it predicts.
const REFINE_ROUNDS: usize = 3;
/// An inner corner takes part in a refit when its X-junction contrast is at least this fraction
/// of the strongest corner's (pieces hide the others, or break their pattern).
const REFINE_CONTRAST: f64 = 0.5;
/// Fewest inner corners a refit needs (the smallest block the detector finds has 21).
const REFINE_MIN_CORNERS: usize = 12;
/// How far, in squares, a corner may move in a refit: further, it latched onto something else.
const REFINE_MAX_SHIFT: f64 = 0.25;

/// Placements of a block on the grid lines kept as candidates: those whose junctions reach this
/// share of the best placement's.
const PLACE_KEEP: f64 = 0.7;

/// Two grids closer than this, in squares at every corner, are one candidate.
const SAME_GRID: f64 = 0.25;

/// Widths tried, in squares, of the border between a board's outline and its playing area.
const BORDERS: [f64; 8] = [0.0, 0.1, 0.2, 0.3, 0.45, 0.6, 0.8, 1.0];

/// Corners marked by hand miss the grid when their X-junctions are under this share of those
/// of the grid refitted near them: about a sixth of a square off at the inner corners, where the
/// junctions' quadrants (a third of a square) half overlap the next squares. Closer marks are
/// kept: a refit there would move them by less than the marks' own noise.
const MISSED_GRID: f64 = 0.5;

/// Smallest outline tried, as a share of the image's area.
const MIN_OUTLINE_AREA: f64 = 0.04;

/// Outlines tried at most, largest first.
const MAX_OUTLINES: usize = 8;

/// Weakest mean X-junction contrast, in grey levels, of a grid found without a detector's block
/// (from an outline, or near corners marked by hand): a board's squares alternate far more than
/// this, a table's or a wall's texture far less.
const MIN_JUNCTIONS: f64 = 12.0;

/// The playing area's outer corners in image order (top-left, top-right, bottom-right,
/// bottom-left) in `image` (BGR or grey), or `None` if no board is found: the first grid found,
/// placed where its junctions are strongest.
pub fn find(image: &Mat) -> Result<Option<[Px; 4]>, BoardError> {
    Ok(search(image, false)?.into_iter().next())
}

/// Every distinct playing area found in `image`, in image order, the first being [`find`]'s:
/// the first block at each search scale, each placed at every offset whose junctions come close
/// to the best, and the grids of the board outlines at the first scale. Empty if no board is
/// found.
pub fn candidates(image: &Mat) -> Result<Vec<[Px; 4]>, BoardError> {
    search(image, true)
}

fn search(image: &Mat, all: bool) -> Result<Vec<[Px; 4]>, BoardError> {
    let gray = grey(image)?;
    let long = f64::from(gray.cols().max(gray.rows()));
    let mut tried: Vec<f64> = Vec::new();
    let mut found: Vec<[Px; 4]> = Vec::new();
    let upscaled = (long < UPSCALED_SIDE).then_some(UPSCALED_SIDE / long);
    let mut loose: Vec<(f64, Loose)> = Vec::new();
    for scale in SEARCH_SIDES.iter().map(|side| (side / long).min(1.0)).chain(upscaled) {
        if tried.contains(&scale) {
            continue;
        }
        tried.push(scale);
        let small = scaled(&gray, scale)?;
        let mut here = find_at(&small, all, &mut |block| loose.push((scale, block)))?;
        // Outlines where the detector finds no block; for every candidate, at the first scale
        // only: they hardly depend on it, and each costs refits.
        if (here.is_empty() && !all) || (all && tried.len() == 1) {
            here.extend(from_outlines(&small, all)?);
        }
        for corners in here {
            add(&mut found, &gray, corners, scale)?;
        }
        if !all && !found.is_empty() {
            break;
        }
    }
    if found.is_empty() {
        for (scale, (points, cols, rows)) in loose {
            if let Some(h) = from_loose(&scaled(&gray, scale)?, &points, cols, rows)? {
                add(&mut found, &gray, outer_of(&h), scale)?;
                if !all {
                    break;
                }
            }
        }
    }
    Ok(found)
}

/// A block the detector found that strays from a lattice by more than [`MAX_LATTICE_ERROR`] but
/// not [`LOOSE_LATTICE_ERROR`]: its image points, columns and rows.
type Loose = (Vec<(f64, f64)>, i32, i32);

/// The board a [`Loose`] block in `small` (the image it was found in) shows, as board units to
/// image: the block on its lattice within [`LOOSE_LATTICE_ERROR`], placed and refitted as
/// [`place`] does, if its junctions alternate and are a board's.
fn from_loose(small: &Mat, points: &[(f64, f64)], cols: i32, rows: i32) -> Result<Option<Homography>, BoardError> {
    let Some((grid, points)) = on_lattice(points, cols, rows, LOOSE_LATTICE_ERROR)? else { return Ok(None) };
    let Some(h) = place(small, &grid, &points, cols, rows)?.into_iter().next() else { return Ok(None) };
    Ok((a_board_lattice(small, &h)? && junctions(small, &h)? >= MIN_JUNCTIONS).then_some(h))
}

/// `gray` resized by `scale` for the search.
fn scaled(gray: &Mat, scale: f64) -> Result<Mat, BoardError> {
    let mut small = Mat::default();
    // Area averaging shrinks without aliasing; enlarging, it would repeat pixels.
    let interpolation = if scale > 1.0 { imgproc::INTER_CUBIC } else { imgproc::INTER_AREA };
    imgproc::resize(gray, &mut small, Size::default(), scale, scale, interpolation)?;
    Ok(small)
}

/// Adds the playing area `corners`, found in `gray` resized by `scale` (image order), to `found`
/// in `gray`'s pixels unless it is there already. Found in a shrunk picture, it is refitted in
/// the full one, where the corners are sharper.
fn add(found: &mut Vec<[Px; 4]>, gray: &Mat, corners: [Px; 4], scale: f64) -> Result<(), BoardError> {
    let mut corners = corners.map(|p| Px { x: p.x / scale, y: p.y / scale });
    if scale < 1.0 {
        let outer = [(0.0, 0.0), (8.0, 0.0), (8.0, 8.0), (0.0, 8.0)];
        let h = refine(gray, Homography::fit(&outer, &corners.map(|p| (p.x, p.y)))?)?;
        corners = outer.map(|u| {
            let (x, y) = h.apply(u);
            Px { x, y }
        });
    }
    if !found.iter().any(|f| same_grid(f, &corners)) {
        found.push(corners);
    }
    Ok(())
}

/// The playing area, in image order, that `units_to_image` puts in the image.
fn outer_of(units_to_image: &Homography) -> [Px; 4] {
    image_order([(0.0, 0.0), (8.0, 0.0), (8.0, 8.0), (0.0, 8.0)].map(|p| {
        let (x, y) = units_to_image.apply(p);
        Px { x, y }
    }))
}

/// Grids taken from the board's outline in an image scaled for the search: for each large
/// four-sided contour, the border width whose refitted grid shows the strongest X-junctions,
/// kept if they are a board's. Strongest first; with `all`, every outline's, else the best.
fn from_outlines(small: &Mat, all: bool) -> Result<Vec<[Px; 4]>, BoardError> {
    let mut scored: Vec<(f64, Homography)> = Vec::new();
    for outline in outlines(small)? {
        let mut best: Option<(f64, Homography)> = None;
        for b in BORDERS {
            let units = [(-b, -b), (8.0 + b, -b), (8.0 + b, 8.0 + b), (-b, 8.0 + b)];
            // A degenerate fit (an outline far from a board's shape) is no candidate.
            let Ok((score, h)) = Homography::fit(&units, &outline.map(|p| (p.x, p.y))).and_then(|h| refine(small, h)).and_then(|h| Ok((junctions(small, &h)?, h))) else {
                continue;
            };
            if best.as_ref().is_none_or(|(s, _)| score > *s) {
                best = Some((score, h));
            }
        }
        if let Some((score, h)) = best.filter(|(s, _)| *s >= MIN_JUNCTIONS) {
            scored.push((score, h));
        }
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    let keep = if all { scored.len() } else { 1 };
    Ok(scored.iter().take(keep).map(|(_, h)| outer_of(h)).collect())
}

/// The large convex four-sided contours of a grey image (edges, then polygons), largest first,
/// and the image's own frame last (a board that fills it), each in image order.
fn outlines(gray: &Mat) -> Result<Vec<[Px; 4]>, BoardError> {
    let mut blurred = Mat::default();
    imgproc::gaussian_blur_def(gray, &mut blurred, Size::new(5, 5), 0.0)?;
    let mut edges = Mat::default();
    imgproc::canny_def(&blurred, &mut edges, 40.0, 120.0)?;
    let mut thick = Mat::default();
    let kernel = imgproc::get_structuring_element_def(imgproc::MORPH_RECT, Size::new(3, 3))?;
    imgproc::dilate_def(&edges, &mut thick, &kernel)?;
    let mut contours = Vector::<Vector<opencv::core::Point>>::new();
    imgproc::find_contours_def(&thick, &mut contours, imgproc::RETR_LIST, imgproc::CHAIN_APPROX_SIMPLE)?;
    let image_area = f64::from(gray.cols()) * f64::from(gray.rows());
    let mut quads: Vec<(f64, [Px; 4])> = Vec::new();
    for contour in contours.iter() {
        let perimeter = imgproc::arc_length(&contour, true)?;
        let mut polygon = Vector::<opencv::core::Point>::new();
        imgproc::approx_poly_dp(&contour, &mut polygon, 0.02 * perimeter, true)?;
        if polygon.len() != 4 || !imgproc::is_contour_convex(&polygon)? {
            continue;
        }
        let area = imgproc::contour_area_def(&polygon)?;
        if area < MIN_OUTLINE_AREA * image_area {
            continue;
        }
        let corners: Vec<Px> = polygon.iter().map(|p| Px { x: f64::from(p.x), y: f64::from(p.y) }).collect();
        let quad = image_order([corners[0], corners[1], corners[2], corners[3]]);
        if !quads.iter().any(|(_, q)| same_grid(q, &quad)) {
            quads.push((area, quad));
        }
    }
    quads.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut out: Vec<[Px; 4]> = quads.into_iter().take(MAX_OUTLINES).map(|(_, q)| q).collect();
    let (w, h) = (f64::from(gray.cols() - 1), f64::from(gray.rows() - 1));
    out.push([Px { x: 0.0, y: 0.0 }, Px { x: w, y: 0.0 }, Px { x: w, y: h }, Px { x: 0.0, y: h }]);
    Ok(out)
}

/// The playing area that corners marked by hand point at, in their order. Marks on the grid
/// are kept as they are; marks that miss it (a printed border's outer edge taken for the playing
/// area's, a careless click) show X-junctions under half of those of the grid near them, and
/// are moved onto it. The grid near them is the quadrilateral they mark taken as the playing
/// area, or as the outer edge of a printed border up to a square wide, each refitted to the
/// inner corners it predicts; the strongest is kept if its junctions are a board's.
pub fn snap(image: &Mat, marked: [Px; 4]) -> Result<[Px; 4], BoardError> {
    let gray = grey(image)?;
    let to = marked.map(|p| (p.x, p.y));
    let units = |b: f64| [(-b, -b), (8.0 + b, -b), (8.0 + b, 8.0 + b), (-b, 8.0 + b)];
    let given = junctions(&gray, &Homography::fit(&units(0.0), &to)?)?;
    let mut best: Option<(f64, Homography)> = None;
    for b in BORDERS {
        // A degenerate refit is no candidate.
        let Ok((score, h)) = Homography::fit(&units(b), &to).and_then(|h| refine(&gray, h)).and_then(|h| Ok((junctions(&gray, &h)?, h))) else {
            continue;
        };
        if best.as_ref().is_none_or(|(s, _)| score > *s) {
            best = Some((score, h));
        }
    }
    Ok(match best {
        Some((score, h)) if score >= MIN_JUNCTIONS && given < MISSED_GRID * score => {
            let grid = units(0.0).map(|p| {
                let (x, y) = h.apply(p);
                Px { x, y }
            });
            let square = (grid[0].x - grid[2].x).hypot(grid[0].y - grid[2].y) / (8.0 * std::f64::consts::SQRT_2);
            let off = grid.iter().zip(&marked).map(|(g, m)| (g.x - m.x).hypot(g.y - m.y)).fold(0.0, f64::max) / square;
            tracing::warn!(given, grid = score, "the corners given miss the board's grid lines (by up to {off:.2} of a square): moved onto them");
            grid
        }
        _ => marked,
    })
}

/// Whether two playing areas (image order) are the same grid.
fn same_grid(a: &[Px; 4], b: &[Px; 4]) -> bool {
    let square = (a[0].x - a[2].x).hypot(a[0].y - a[2].y) / (8.0 * std::f64::consts::SQRT_2);
    a.iter().zip(b).all(|(p, q)| (p.x - q.x).hypot(p.y - q.y) < SAME_GRID * square)
}

/// Seeds the random number generators the sector-based detector draws on (its kd-tree of corner
/// candidates, FLANN's, shuffles with OpenCV's generator and picks split dimensions with the C
/// library's), so that its answer depends on the picture alone, not on the pictures searched
/// before it in the process: unseeded, a board missed when read alone was found in a run over
/// many photos.
fn seed_detector() -> Result<(), BoardError> {
    unsafe extern "C" {
        /// The C library's `srand`.
        safe fn srand(seed: std::ffi::c_uint);
    }
    srand(1);
    opencv::core::set_rng_seed(1)?;
    Ok(())
}

/// The boards in an image already scaled for the search, in its pixels: the first block the
/// detector finds, at its best placement (and, with `all`, at every placement close to it).
/// Blocks refused as off their lattice but within [`LOOSE_LATTICE_ERROR`] of it go to `loose`.
fn find_at(small: &Mat, all: bool, loose: &mut impl FnMut(Loose)) -> Result<Vec<[Px; 4]>, BoardError> {
    for flags in FLAGS {
        for (cols, rows) in PATTERNS {
            let mut found = Vector::<Point2f>::new();
            seed_detector()?;
            if !calib3d::find_chessboard_corners_sb(small, Size::new(cols, rows), &mut found, flags)? {
                continue;
            }
            let points: Vec<(f64, f64)> = found.iter().map(|p| (f64::from(p.x), f64::from(p.y))).collect();
            let Some((grid, points)) = on_lattice(&points, cols, rows, MAX_LATTICE_ERROR)? else {
                if on_lattice(&points, cols, rows, LOOSE_LATTICE_ERROR)?.is_some() {
                    loose((points, cols, rows));
                }
                continue;
            };
            let placements = place(small, &grid, &points, cols, rows)?;
            if placements.first().map(|h| a_board_lattice(small, h)).transpose()? != Some(true) {
                continue;
            }
            let keep = if all { placements.len() } else { 1 };
            return Ok(placements.iter().take(keep).map(outer_of).collect());
        }
    }
    Ok(Vec::new())
}

/// Grid coordinates of a `cols` x `rows` block starting at grid line (`ox`, `oy`), in the
/// detector's order (row by row).
fn block(cols: i32, rows: i32, ox: i32, oy: i32) -> Vec<(f64, f64)> {
    (0..rows).flat_map(|j| (0..cols).map(move |i| (f64::from(ox + i), f64::from(oy + j)))).collect()
}

/// Corners of a found block: their grid coordinates and their image points.
type Block = (Vec<(f64, f64)>, Vec<(f64, f64)>);

/// The corners of a found `cols` x `rows` block that lie on one perfect lattice, as grid
/// coordinates (the block's first corner at 0, 0) and image points: the lattice is fitted to
/// them all, and the corner furthest from it left out and the lattice refitted until every
/// corner left lies within `max_error` squares of it. Where fewer than [`LATTICE_SHARE`] of
/// the block are left, `None`: the block is no board's. A piece beside a corner can pull the
/// detector's estimate of it a quarter of a square off; the rest of the block still lies on the
/// lattice. (Leaving out the worst, not sampling as RANSAC does, gives the same answer whatever
/// was fitted before.)
fn on_lattice(points: &[(f64, f64)], cols: i32, rows: i32, max_error: f64) -> Result<Option<Block>, BoardError> {
    let last = points[(cols - 1) as usize];
    let tolerance = max_error * (last.0 - points[0].0).hypot(last.1 - points[0].1) / f64::from(cols - 1);
    let (mut grid, mut points) = (block(cols, rows, 0, 0), points.to_vec());
    let least = (LATTICE_SHARE * grid.len() as f64).ceil() as usize;
    while grid.len() >= least {
        let h = Homography::fit(&grid, &points)?;
        let errors = grid.iter().zip(&points).map(|(&g, &(x, y))| {
            let (px, py) = h.apply(g);
            (px - x).hypot(py - y)
        });
        let (worst, error) = errors.enumerate().max_by(|a, b| a.1.total_cmp(&b.1)).unwrap_or((0, 0.0));
        if error <= tolerance {
            return Ok(Some((grid, points)));
        }
        grid.remove(worst);
        points.remove(worst);
    }
    Ok(None)
}

/// Puts a `cols` x `rows` block of corners, its `points` at `grid` (the block's first corner at
/// 0, 0), on the board's grid lines 0..=8 (a detector may take the board's edge for a row of
/// corners): every offset is tried, refitted to the inner corners it predicts ([`refine`]; a
/// block's lattice extrapolated to the far edge strays), and scored by its chessboard
/// X-junctions at the 49 inner corners less the chequer it leaves just outside the board
/// ([`ring`]): a grid a square short of the board loses a seventh of a row of junctions, but
/// leaves a whole row of squares outside. Returns board units to image for the best offset
/// first, then the others reaching [`PLACE_KEEP`] of it, best first.
fn place(gray: &Mat, grid: &[(f64, f64)], points: &[(f64, f64)], cols: i32, rows: i32) -> Result<Vec<Homography>, BoardError> {
    let mut scored: Vec<(f64, Homography)> = Vec::new();
    for ox in 0..=(9 - cols) {
        for oy in 0..=(9 - rows) {
            let placed: Vec<(f64, f64)> = grid.iter().map(|&(i, j)| (i + f64::from(ox), j + f64::from(oy))).collect();
            let h = refine(gray, Homography::fit(&placed, points)?)?;
            let warped = margined(gray, &h)?;
            scored.push((junction_score(&corners_of(&warped)?) - ring(&warped, gray, &h)?, h));
        }
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    let best = scored.first().map_or(0.0, |s| s.0);
    Ok(scored.into_iter().filter(|(s, _)| *s >= PLACE_KEEP * best).map(|(_, h)| h).collect())
}

/// The mean X-junction contrast, in grey levels, at the 49 inner corners of the board
/// `units_to_image` puts in the one-channel image `gray`: opposite quadrants alike,
/// neighbouring quadrants different, alternating from corner to corner.
pub fn junctions(gray: &Mat, units_to_image: &Homography) -> Result<f64, BoardError> {
    Ok(junction_score(&inner_corners(gray, units_to_image)?))
}

/// The mean X-junction contrast of the 49 inner corners (see [`junctions`]).
fn junction_score(corners: &[Corner]) -> f64 {
    (corners.iter().map(|c| c.contrast).sum::<f64>() / 49.0).abs()
}

/// Whether the grid `units_to_image` puts in `gray` has a board's lines, not a lattice of some of
/// them: its junctions alternate as a chessboard's ([`alternation`]) and none show between its
/// lines ([`between_lines`]).
fn a_board_lattice(gray: &Mat, units_to_image: &Homography) -> Result<bool, BoardError> {
    let warped = margined(gray, units_to_image)?;
    Ok(alternation(&warped)? >= ALTERNATION && between_lines(&warped)? < BETWEEN_LINES)
}

/// The share of the X-junction contrast at the 49 inner corners of a [`margined`] board that
/// alternates from corner to corner as a chessboard's does: near 1 on a board (pieces hide
/// corners, but seldom turn them), near 1/2 on a grid whose lines are two squares apart.
fn alternation(warped: &Mat) -> Result<f64, BoardError> {
    let corners = corners_of(warped)?;
    let all: f64 = corners.iter().map(|c| c.contrast.abs()).sum();
    let net: f64 = corners.iter().map(|c| c.contrast).sum::<f64>().abs();
    Ok(if all > 0.0 { (1.0 + net / all) / 2.0 } else { 0.0 })
}

/// The strongest X-junction contrast seen between the grid lines of a [`margined`] board, as a
/// share of that at its 49 inner corners: for each point a half or a third
/// of a square along (every offset (a/d, b/d), d = 2 or 3, off the lines' crossings), the mean
/// absolute contrast at it in each square, the largest of these over the corners'. Near 0 on a
/// board, whose square centres and edge midpoints show none; near 1 on a grid whose lines skip
/// some of the board's, as a sheared one can (its lines one square apart one way and two the
/// other, along a diagonal: it alternates as a board does), since the board's other crossings
/// then fall at those offsets.
fn between_lines(warped: &Mat) -> Result<f64, BoardError> {
    let on = corners_of(warped)?.iter().map(|c| c.contrast.abs()).sum::<f64>() / 49.0;
    let mut between: f64 = 0.0;
    for d in [2, 3] {
        for (a, b) in (0..d).flat_map(|a| (0..d).map(move |b| (a, b))).filter(|&ab| ab != (0, 0)) {
            let mut sum = 0.0;
            for i in 0..8 {
                for j in 0..8 {
                    sum += junction_at(warped, (i + 1) * S + a * S / d, (j + 1) * S + b * S / d)?.abs();
                }
            }
            between = between.max(sum / 64.0);
        }
    }
    Ok(if on > 0.0 { between / on } else { 1.0 })
}

/// An inner corner of the board's grid, as seen in an image.
#[derive(Clone, Copy, Debug)]
struct Corner {
    /// Its grid lines, both 1 to 7 (0 and 8 are the board's edges).
    lines: (i32, i32),
    /// Its X-junction contrast in grey levels: the mean of the top-left and bottom-right
    /// quadrants less that of the other two, the sign flipped on alternate corners so that all
    /// share one sign on a board.
    contrast: f64,
}

/// Pixels a square in [`margined`].
const S: i32 = 24;

/// The board `units_to_image` puts in `gray`, top-down, [`S`] pixels a square, with a square of
/// margin all round (10 x 10 squares).
fn margined(gray: &Mat, units_to_image: &Homography) -> Result<Mat, BoardError> {
    const N: i32 = 10;
    // Warped pixel -> board units (one square of margin) -> image.
    let to_units = Homography([[1.0 / f64::from(S), 0.0, -1.0], [0.0, 1.0 / f64::from(S), -1.0], [0.0, 0.0, 1.0]]);
    let mat = Mat::from_slice_2d(&units_to_image.after(&to_units).0)?;
    let mut warped = Mat::default();
    imgproc::warp_perspective(
        gray,
        &mut warped,
        &mat,
        Size::new(N * S, N * S),
        imgproc::INTER_AREA | imgproc::WARP_INVERSE_MAP,
        opencv::core::BORDER_REPLICATE,
        opencv::core::Scalar::default(),
    )?;
    Ok(warped)
}

/// The mean grey level of a `w` x `h` patch of a [`margined`] board at (`x0`, `y0`).
fn patch(warped: &Mat, x0: i32, y0: i32, w: i32, h: i32) -> Result<f64, BoardError> {
    let mut sum = 0u32;
    for y in y0..y0 + h {
        for x in x0..x0 + w {
            sum += u32::from(*warped.at_2d::<u8>(y, x)?);
        }
    }
    Ok(f64::from(sum) / f64::from(w * h))
}

/// How much chequer lies just outside the [`margined`] board `units_to_image` puts in `gray`, in
/// grey levels: along each edge, the half squares beyond the eight edge squares, alternately
/// added and taken away (half the light and dark squares' difference where a row of squares
/// lies there), summed over the edges that lie inside the image. Near 0 beyond a board's edge
/// (a border, the table); a grid placed a square short of the board leaves a row of squares
/// there.
fn ring(warped: &Mat, gray: &Mat, units_to_image: &Homography) -> Result<f64, BoardError> {
    let h = S / 2;
    let inside = |(u, v): (f64, f64)| {
        let (x, y) = units_to_image.apply((u, v));
        x >= 0.0 && y >= 0.0 && x < f64::from(gray.cols()) && y < f64::from(gray.rows())
    };
    // Each edge's far corners, half a square out.
    let ends = [[(0.0, -0.5), (8.0, -0.5)], [(0.0, 8.5), (8.0, 8.5)], [(-0.5, 0.0), (-0.5, 8.0)], [(8.5, 0.0), (8.5, 8.0)]];
    let mut total = 0.0;
    for edge in (0..4).filter(|&e| ends[e].iter().all(|&p| inside(p))) {
        let mut sum = 0.0;
        for k in 0..8 {
            let along = (k + 1) * S;
            let (x, y, w, ht) = match edge {
                0 => (along, h, S, h),
                1 => (along, 9 * S, S, h),
                2 => (h, along, h, S),
                _ => (9 * S, along, h, S),
            };
            let sign = if k % 2 == 0 { 1.0 } else { -1.0 };
            sum += sign * patch(warped, x, y, w, ht)?;
        }
        total += (sum / 8.0).abs();
    }
    Ok(total)
}

/// The 49 inner corners of the board `units_to_image` puts in `gray`.
fn inner_corners(gray: &Mat, units_to_image: &Homography) -> Result<Vec<Corner>, BoardError> {
    corners_of(&margined(gray, units_to_image)?)
}

/// The 49 inner corners of a [`margined`] board.
fn corners_of(warped: &Mat) -> Result<Vec<Corner>, BoardError> {
    let mut out = Vec::with_capacity(49);
    for i in 1..=7 {
        for j in 1..=7 {
            let contrast = junction_at(warped, (i + 1) * S, (j + 1) * S)?;
            out.push(Corner { lines: (i, j), contrast: if (i + j) % 2 == 0 { contrast } else { -contrast } });
        }
    }
    Ok(out)
}

/// The X-junction contrast at (`x`, `y`) of a [`margined`] board: the mean of the top-left and
/// bottom-right patches a third of a square wide less that of the other two.
fn junction_at(warped: &Mat, x: i32, y: i32) -> Result<f64, BoardError> {
    let q = S / 3;
    let mean = |x0: i32, y0: i32| patch(warped, x0, y0, q, q);
    Ok((mean(x - q, y - q)? + mean(x, y)?) / 2.0 - (mean(x, y - q)? + mean(x - q, y)?) / 2.0)
}

/// Refits the grid (board units to image) to the inner corners it predicts: those showing a
/// clear X-junction are found to the sub-pixel (`cornerSubPix`) and the grid refitted to them,
/// leaving out any that disagree with the rest (RANSAC). A block of 7 x 3 corners alone leaves
/// the far edge of the board to extrapolation; this brings in every corner the pieces leave
/// visible. A refit that weakens the junctions is not kept.
fn refine(gray: &Mat, mut h: Homography) -> Result<Homography, BoardError> {
    let mut corners = inner_corners(gray, &h)?;
    let mut score = junction_score(&corners);
    for _ in 0..REFINE_ROUNDS {
        let sign = corners.iter().map(|c| c.contrast).sum::<f64>().signum();
        let strongest = corners.iter().map(|c| c.contrast * sign).fold(0.0, f64::max);
        let grid: Vec<(f64, f64)> = corners
            .iter()
            .filter(|c| c.contrast * sign >= REFINE_CONTRAST * strongest)
            .map(|c| (f64::from(c.lines.0), f64::from(c.lines.1)))
            .collect();
        if grid.len() < REFINE_MIN_CORNERS {
            break;
        }
        let seeds: Vec<(f64, f64)> = grid.iter().map(|&g| h.apply(g)).collect();
        // One square in pixels, near each corner: the distance to the next grid line.
        let square: Vec<f64> = grid.iter().zip(&seeds).map(|(&(i, j), &(x, y))| {
            let (nx, ny) = h.apply((i + 1.0, j));
            (nx - x).hypot(ny - y)
        }).collect();
        let smallest = square.iter().copied().fold(f64::INFINITY, f64::min);
        let half_window = (0.25 * smallest).round().clamp(2.0, 15.0) as i32;
        let mut found: Vector<Point2f> = seeds.iter().map(|&(x, y)| Point2f::new(x as f32, y as f32)).collect();
        let criteria = opencv::core::TermCriteria::new(opencv::core::TermCriteria_COUNT + opencv::core::TermCriteria_EPS, 40, 0.01)?;
        imgproc::corner_sub_pix(gray, &mut found, Size::new(half_window, half_window), Size::new(-1, -1), criteria)?;
        let (mut from, mut to) = (Vec::new(), Vec::new());
        for (k, p) in found.iter().enumerate() {
            let (x, y) = (f64::from(p.x), f64::from(p.y));
            if (x - seeds[k].0).hypot(y - seeds[k].1) <= REFINE_MAX_SHIFT * square[k] {
                from.push(grid[k]);
                to.push((x, y));
            }
        }
        if from.len() < REFINE_MIN_CORNERS {
            break;
        }
        let refit = Homography::fit_robust(&from, &to, 0.1 * smallest)?;
        let refit_corners = inner_corners(gray, &refit)?;
        let refit_score = junction_score(&refit_corners);
        if refit_score < score {
            break;
        }
        (h, corners, score) = (refit, refit_corners, refit_score);
    }
    Ok(h)
}

/// The image converted to one channel.
pub fn grey(image: &Mat) -> Result<Mat, BoardError> {
    if image.channels() == 1 {
        return Ok(image.clone());
    }
    let mut gray = Mat::default();
    imgproc::cvt_color(image, &mut gray, imgproc::COLOR_BGR2GRAY, 0)?;
    Ok(gray)
}

/// Orders four corners as top-left, top-right, bottom-right, bottom-left in the image.
pub fn image_order(corners: [Px; 4]) -> [Px; 4] {
    let cx = corners.iter().map(|p| p.x).sum::<f64>() / 4.0;
    let cy = corners.iter().map(|p| p.y).sum::<f64>() / 4.0;
    let mut sorted = corners;
    // Clockwise on screen (y down) from the top-left quadrant.
    sorted.sort_by(|a, b| {
        let ang = |p: &Px| (p.y - cy).atan2(p.x - cx);
        ang(a).total_cmp(&ang(b))
    });
    let start = (0..4).min_by(|&i, &j| (sorted[i].x + sorted[i].y).total_cmp(&(sorted[j].x + sorted[j].y))).unwrap_or(0);
    std::array::from_fn(|i| sorted[(start + i) % 4])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_order_is_clockwise_from_top_left() {
        let p = |x, y| Px { x, y };
        let ordered = image_order([p(90.0, 110.0), p(10.0, 95.0), p(95.0, 5.0), p(5.0, 8.0)]);
        assert_eq!(ordered, [p(5.0, 8.0), p(95.0, 5.0), p(90.0, 110.0), p(10.0, 95.0)]);
    }

    /// A board seen in perspective (`units_to_image`), 640 x 480, with grey discs hiding the
    /// inner corners listed, as pieces would.
    fn board_in_perspective(units_to_image: &Homography, hidden: &[(i32, i32)]) -> Mat {
        const S: i32 = 40;
        let side = 10 * S;
        let mut flat = Mat::new_rows_cols_with_default(side, side, opencv::core::CV_8UC1, opencv::core::Scalar::all(128.0)).unwrap();
        for r in 0..8 {
            for c in 0..8 {
                let v = if (r + c) % 2 == 0 { 210.0 } else { 60.0 };
                let rect = opencv::core::Rect::new(S + c * S, S + r * S, S, S);
                imgproc::rectangle(&mut flat, rect, opencv::core::Scalar::all(v), -1, imgproc::LINE_8, 0).unwrap();
            }
        }
        for &(i, j) in hidden {
            let centre = opencv::core::Point::new(S + i * S, S + j * S);
            imgproc::circle(&mut flat, centre, S / 3, opencv::core::Scalar::all(140.0), -1, imgproc::LINE_AA, 0).unwrap();
        }
        // flat pixel centres -> board units (one square of margin) -> image
        let (k, o) = (1.0 / f64::from(S), 0.5 / f64::from(S) - 1.0);
        let to_units = Homography([[k, 0.0, o], [0.0, k, o], [0.0, 0.0, 1.0]]);
        let mat = Mat::from_slice_2d(&units_to_image.after(&to_units).0).unwrap();
        let mut image = Mat::default();
        imgproc::warp_perspective(&flat, &mut image, &mat, Size::new(640, 480), imgproc::INTER_AREA, opencv::core::BORDER_CONSTANT, opencv::core::Scalar::all(128.0)).unwrap();
        image
    }

    fn worst_corner_error(a: &Homography, b: &Homography) -> f64 {
        [(0.0, 0.0), (8.0, 0.0), (8.0, 8.0), (0.0, 8.0)]
            .iter()
            .map(|&p| {
                let ((ax, ay), (bx, by)) = (a.apply(p), b.apply(p));
                (ax - bx).hypot(ay - by)
            })
            .fold(0.0, f64::max)
    }

    #[test]
    fn refining_fits_the_grid_to_every_visible_corner() {
        let grid: Vec<(f64, f64)> = [(0.0, 0.0), (8.0, 0.0), (8.0, 8.0), (0.0, 8.0)].to_vec();
        let truth = Homography::fit(&grid, &[(190.0, 60.0), (470.0, 80.0), (540.0, 430.0), (110.0, 410.0)]).unwrap();
        let hidden = [(2, 2), (3, 5), (6, 1), (4, 4), (7, 7)];
        let image = board_in_perspective(&truth, &hidden);
        // A start as a 7 x 3 block near White's edge leaves it: the block's rows a pixel too far
        // apart, so the far edge, reached by extrapolation, is several pixels out.
        let block: Vec<(f64, f64)> = (5..=7).flat_map(|j| (1..=7).map(move |i| (f64::from(i), f64::from(j)))).collect();
        let noisy: Vec<(f64, f64)> = block.iter().map(|&g| {
            let (x, y) = truth.apply(g);
            (x, y + (g.1 - 6.0) * 1.2)
        }).collect();
        let start = Homography::fit(&block, &noisy).unwrap();
        let before = worst_corner_error(&start, &truth);
        let refined = refine(&image, start).unwrap();
        let after = worst_corner_error(&refined, &truth);
        assert!(before > 3.0, "the start is off: {before:.2} px");
        assert!(after < 0.5 && after < before / 4.0, "refined to {after:.2} px from {before:.2} px");
    }

    #[test]
    fn corners_marked_off_the_grid_are_moved_onto_it_and_marks_on_it_kept() {
        let outer = [(0.0, 0.0), (8.0, 0.0), (8.0, 8.0), (0.0, 8.0)];
        let truth = Homography::fit(&outer, &[(190.0, 60.0), (470.0, 80.0), (540.0, 430.0), (110.0, 410.0)]).unwrap();
        let image = board_in_perspective(&truth, &[(2, 2), (3, 5), (6, 1), (4, 4)]);
        let at = |units: [(f64, f64); 4]| {
            units.map(|p| {
                let (x, y) = truth.apply(p);
                Px { x, y }
            })
        };
        let grid = at(outer);
        // The outer edge of a printed border 0.7 squares wide, as a8, h8, h1, a1 (a8 at the
        // bottom left): the order is kept.
        let border = at([(-0.7, 8.7), (-0.7, -0.7), (8.7, -0.7), (8.7, 8.7)]);
        let snapped = snap(&image, border).unwrap();
        for (p, q) in snapped.iter().zip([grid[3], grid[0], grid[1], grid[2]]) {
            assert!((p.x - q.x).hypot(p.y - q.y) < 1.5, "{snapped:?} against {grid:?}");
        }
        // Marks a pixel or two off the corners are on the grid: kept as marked.
        let marked = grid.map(|p| Px { x: p.x + 1.5, y: p.y - 1.0 });
        assert_eq!(snap(&image, marked).unwrap(), marked);
    }

    #[test]
    fn a_block_with_a_corner_pulled_off_by_a_piece_is_still_a_board() {
        let outer = [(0.0, 0.0), (8.0, 0.0), (8.0, 8.0), (0.0, 8.0)];
        let h = Homography::fit(&outer, &[(190.0, 60.0), (470.0, 80.0), (540.0, 430.0), (110.0, 410.0)]).unwrap();
        let perfect: Vec<(f64, f64)> = block(7, 3, 1, 4).into_iter().map(|g| h.apply(g)).collect();
        let square = 35.0;
        // One corner a quarter of a square off, as a piece beside it pulls it: the other 20 are
        // the block, on the lattice.
        let mut pulled = perfect.clone();
        pulled[7].0 += 0.27 * square;
        let (grid, points) = on_lattice(&pulled, 7, 3, MAX_LATTICE_ERROR).unwrap().expect("a board's block");
        assert_eq!(grid.len(), 20);
        assert!(!grid.contains(&(0.0, 1.0)) && !points.contains(&pulled[7]));
        // Four corners off: more than a board's block shows; refused.
        for k in [3, 7, 12, 18] {
            pulled[k].1 += 0.3 * square;
        }
        assert!(on_lattice(&pulled, 7, 3, MAX_LATTICE_ERROR).unwrap().is_none());
    }

    #[test]
    fn a_block_straying_a_third_of_a_square_is_refitted_onto_the_board_and_only_onto_one() {
        let outer = [(0.0, 0.0), (8.0, 0.0), (8.0, 8.0), (0.0, 8.0)];
        let truth = Homography::fit(&outer, &[(190.0, 60.0), (470.0, 80.0), (540.0, 430.0), (110.0, 410.0)]).unwrap();
        let image = board_in_perspective(&truth, &[(2, 2), (3, 5), (6, 1), (4, 4)]);
        // A 7 x 3 block as a detector returns it from a blurred board: five corners (more than a
        // tenth) pulled a quarter to a third of a square off, each its own way.
        let mut block_points: Vec<(f64, f64)> = block(7, 3, 1, 4).into_iter().map(|g| truth.apply(g)).collect();
        for (k, (dx, dy)) in [(2, (9.0, 0.0)), (6, (-8.0, 6.0)), (9, (0.0, -10.0)), (15, (7.0, 7.0)), (19, (-10.0, 0.0))] {
            block_points[k].0 += dx;
            block_points[k].1 += dy;
        }
        assert!(on_lattice(&block_points, 7, 3, MAX_LATTICE_ERROR).unwrap().is_none());
        let h = from_loose(&image, &block_points, 7, 3).unwrap().expect("the board");
        assert!(worst_corner_error(&h, &truth) < 0.1, "{}", worst_corner_error(&h, &truth));
        // The same block over a plain table shows no board's junctions: refused.
        let table = Mat::new_rows_cols_with_default(480, 640, opencv::core::CV_8UC1, opencv::core::Scalar::all(128.0)).unwrap();
        assert!(from_loose(&table, &block_points, 7, 3).unwrap().is_none());
    }

    #[test]
    fn a_grid_whose_lines_are_two_squares_apart_does_not_alternate() {
        let outer = [(0.0, 0.0), (8.0, 0.0), (8.0, 8.0), (0.0, 8.0)];
        let truth = Homography::fit(&outer, &[(190.0, 60.0), (470.0, 80.0), (540.0, 430.0), (110.0, 410.0)]).unwrap();
        let image = board_in_perspective(&truth, &[(2, 2), (3, 5), (6, 1), (4, 4)]);
        assert!(alternation(&margined(&image, &truth).unwrap()).unwrap() > 0.95);
        // Files two squares apart, as a detector's block can take them: every line it draws is
        // one of the board's, yet neighbouring corners alike.
        let stretched = truth.after(&Homography([[2.0, 0.0, -4.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]));
        assert!(alternation(&margined(&image, &stretched).unwrap()).unwrap() < 0.8);
    }

    #[test]
    fn a_grid_sheared_along_a_diagonal_alternates_but_shows_junctions_between_its_lines() {
        let outer = [(0.0, 0.0), (8.0, 0.0), (8.0, 8.0), (0.0, 8.0)];
        let truth = Homography::fit(&outer, &[(190.0, 60.0), (470.0, 80.0), (540.0, 430.0), (110.0, 410.0)]).unwrap();
        let image = board_in_perspective(&truth, &[(2, 2), (3, 5), (6, 1), (4, 4)]);
        assert!(between_lines(&margined(&image, &truth).unwrap()).unwrap() < 0.25, "{}", between_lines(&margined(&image, &truth).unwrap()).unwrap());
        assert!(a_board_lattice(&image, &truth).unwrap());
        // Lines one square apart one way and two the other, along a diagonal: every crossing is
        // one of the board's and they alternate, but the board's other crossings lie at the
        // centres of its cells.
        let sheared = truth.after(&Homography([[1.0, 1.0, -4.0], [0.0, 2.0, -4.0], [0.0, 0.0, 1.0]]));
        assert!(alternation(&margined(&image, &sheared).unwrap()).unwrap() > 0.95);
        assert!(between_lines(&margined(&image, &sheared).unwrap()).unwrap() > 0.7, "{}", between_lines(&margined(&image, &sheared).unwrap()).unwrap());
        assert!(!a_board_lattice(&image, &sheared).unwrap());
    }

    #[test]
    fn a_grid_a_square_short_of_the_board_leaves_chequer_outside_it() {
        let outer = [(0.0, 0.0), (8.0, 0.0), (8.0, 8.0), (0.0, 8.0)];
        let truth = Homography::fit(&outer, &[(190.0, 60.0), (470.0, 80.0), (540.0, 430.0), (110.0, 410.0)]).unwrap();
        let image = board_in_perspective(&truth, &[(2, 2), (3, 5), (6, 1), (4, 4)]);
        let around = |h: &Homography| ring(&margined(&image, h).unwrap(), &image, h).unwrap();
        // The squares are 210 and 60: a row of them outside reads about (210 - 60) / 2.
        assert!(around(&truth) < 10.0, "{}", around(&truth));
        let short = truth.after(&Homography([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]));
        assert!(around(&short) > 50.0, "{}", around(&short));
    }

    #[test]
    fn finds_a_drawn_board() {
        // A synthetic 8x8 board, 40 px squares, inside a 30 px frame of mid grey.
        let side = 8 * 40 + 60;
        let mut img = Mat::new_rows_cols_with_default(side, side, opencv::core::CV_8UC1, opencv::core::Scalar::all(128.0)).unwrap();
        for r in 0..8 {
            for c in 0..8 {
                let v = if (r + c) % 2 == 0 { 220.0 } else { 40.0 };
                let rect = opencv::core::Rect::new(30 + c * 40, 30 + r * 40, 40, 40);
                imgproc::rectangle(&mut img, rect, opencv::core::Scalar::all(v), -1, imgproc::LINE_8, 0).unwrap();
            }
        }
        let found = find(&img).unwrap().expect("a board is found");
        let want = [(30.0, 30.0), (350.0, 30.0), (350.0, 350.0), (30.0, 350.0)];
        for (p, (x, y)) in found.iter().zip(want) {
            assert!((p.x - x).abs() < 2.0 && (p.y - y).abs() < 2.0, "{found:?}");
        }
    }
}
