//! Where the board is in a photo, and which way round it lies. Each grid tried is read by the
//! model in its four orientations, and each reading is scored by how well one chess position
//! explains it, by whether the light squares lie as Law 2.1 sets a board up (a light square at
//! each player's right: this tells a board from its quarter turns, and from a grid shifted by a
//! square), and, when the position is not known, by the coordinates printed around the board
//! (which tell it from its half turn). The best is kept, with how sure the choice is.
//!
//! - When the position is known (a reference photo, `calibrate --fen`), readings are scored by
//!   the known position's likelihood: a grid shifted by a rank reads it badly. The finder's grid
//!   is kept if it reads the position; else every grid the finder offers
//!   ([`corners::candidates`]) is tried.
//! - Otherwise the finder's grid (strongest X-junctions) is kept, unless the coordinates printed
//!   around the board line up with another candidate grid and not with it, and only its
//!   orientation is chosen: by the most likely position a game could show
//!   ([`position::likeliest`]: a king a side, no pawn on the first or last rank), White's army
//!   nearer White's edge, the light squares where Law 2.1 puts them and the printed
//!   coordinates. On the model's readings alone a grid shifted by a file, with a band of empty
//!   table in it, can look as plausible as the right one.

use opencv::core::Mat;
use opencv::prelude::MatTraitConst;
use shakmaty::{Board, Color, Square};

use super::{PhotoError, position, reference};
use crate::board::{Calibration, Found, Px, WhiteEdge, coordinates, corners, orientation};
use crate::detect::reading::piece_class;
use crate::detect::{Model, Reading};

/// How strongly the armies' sides tell which way round a board lies: the log-odds, per rank of
/// [`army_gap`], that White sits at the bottom. Fitted by maximum likelihood on the labelled
/// positions of `../shared/data` (`examples/fit_priors.rs`).
const ARMY_SLOPE: f64 = 1.1;

/// The chance that a board is set up with a dark square at the players' right (against Law
/// 2.1): none of the 80 labelled positions of `../shared/data` is (61 afka2d, 13 phone photos,
/// 6 webcam start positions), so (0 + 1) / (80 + 2) (`examples/fit_priors.rs`).
const MISSET: f64 = 1.0 / 82.0;

/// How surely a [`orientation::chequer`] reading tells which diagonal the light squares take: the
/// logistic slope per unit. Those 80 boards read 1.3 to 2.1 but one (0.25), their quarter turns
/// as much below 0, so the data cannot bound it; at 4 a reading of 1 is 98 % sure, and
/// [`MISSET`] bounds it.
const CHEQUER_SLOPE: f64 = 4.0;

/// The chance that corners given as a8, h8, h1, a1 start at the wrong corner: 1 of the 61
/// afka2d labels of `../shared/data` does (`training/real/orientation.json`), so (1 + 1) /
/// (61 + 2) (`examples/fit_priors.rs`), shared equally by the three other turns.
const MISORDERED: f64 = 2.0 / 63.0;

/// How surely the coordinates printed around a board tell its turn: the log-odds of a turn
/// against its half turn per unit of their [`coordinates::glyph_fit`] difference. Fitted by
/// maximum likelihood on the labelled photos of `../shared/data` (most of their boards print
/// coordinates) and 92 rendered stills of seed 77 (`examples/fit_priors.rs`).
const COORDINATE_SLOPE: f64 = 3.1;

/// How strongly the coordinates printed around a grid must line up with it (the log Bayes factor
/// of [`alignment`]: 20 to 1) for it to be taken as the board, and how much more strongly than
/// with the finder's grid for it to replace that grid; among n candidates, the best must also
/// beat the n - 1 others' chance best (ln n more).
const ALIGNED: f64 = 3.0;

/// Floor of a probability in the scores, so that one square cannot outweigh the board.
const FLOOR: f64 = 1e-4;

/// A board found in a photo.
#[derive(Debug)]
pub struct Located {
    /// The playing area's corners a8, h8, h1, a1.
    pub corners: [Px; 4],
    /// The model's reading of it.
    pub reading: Reading,
    /// The probability that this grid and orientation are the right ones, among all tried.
    pub sure: f64,
    /// Grid and orientation pairs tried.
    pub tried: usize,
}

/// Finds the board in `image` and its orientation. `known`: the position it shows, if known.
pub fn locate(model: &mut Model, image: &Mat, known: Option<&Board>) -> Result<Located, PhotoError> {
    let first = corners::find(image)?;
    match known {
        Some(board) => locate_known(model, image, first, board),
        None => {
            let Some(first) = first else { return Err(PhotoError::NoBoard) };
            let (grid, fit) = aligned(image, first)?;
            best_of(score_grid(model, image, grid, None, Some(fit))?)
        }
    }
}

/// The finder's grid `first`, unless the coordinates printed around the board do not line up
/// with it and do with another candidate grid ([`corners::candidates`], which costs seconds):
/// then that one. Where a board has no coordinates, the finder's grid. Also returns the grid's
/// [`glyph_fit`].
fn aligned(image: &Mat, first: [Px; 4]) -> Result<([Px; 4], [f64; 4]), PhotoError> {
    let fit = glyph_fit(image, first);
    let here = alignment(fit);
    if here >= ALIGNED {
        return Ok((first, fit));
    }
    // The finder's grid is the candidates' first, matched already.
    let candidates = corners::candidates(image)?;
    let chance = (candidates.len().max(1) as f64).ln();
    let best = candidates.into_iter().filter(|g| *g != first).map(|g| (glyph_fit(image, g), g)).max_by(|a, b| alignment(a.0).total_cmp(&alignment(b.0)));
    Ok(match best {
        Some((fit, grid)) if alignment(fit) >= ALIGNED + chance && alignment(fit) - here >= ALIGNED => {
            tracing::debug!(alignment = alignment(fit), finder = here, "the printed coordinates line up with another grid than the finder's");
            (grid, fit)
        }
        _ => (first, fit),
    })
}

/// Finds the board showing `board` in `image`, starting from the corner finder's `first` grid:
/// if one of its turns reads the position (no square contradicts it), it is kept; only otherwise
/// is every candidate grid tried, which costs seconds on a cluttered photo.
pub fn locate_known(model: &mut Model, image: &Mat, first: Option<[Px; 4]>, board: &Board) -> Result<Located, PhotoError> {
    let mut scored = score(model, image, first.as_slice(), Some(board))?;
    if best(&scored).is_some_and(|i| reference::check(&scored[i].2, board).is_ok()) {
        return best_of(scored);
    }
    // The finder's grid, read already, is the candidates' first.
    let others: Vec<[Px; 4]> = corners::candidates(image)?.into_iter().filter(|g| first.as_ref() != Some(g)).collect();
    scored.extend(score(model, image, &others, Some(board))?);
    best_of(scored)
}

/// Checks the order of corners given as a8, h8, h1, a1: each of their four turns is scored as
/// [`locate_among`] scores it (against `known`, the position shown, when it is known), with the
/// given order about 90 times likelier than each other turn (about 1 in 32 hand-labelled lists
/// starts elsewhere). A list that starts at the wrong corner shows a dark square at White's
/// right, or pawns on the first rank, and is turned; the armies' sides then tell a quarter turn
/// from three. On the armies alone, a position must stand about four ranks the wrong way round
/// (a study, never a game) to turn a list by half. Also returns the quarter turns applied (0:
/// the order is kept).
pub fn check_order(model: &mut Model, image: &Mat, a8_h8_h1_a1: [Px; 4], known: Option<&Board>) -> Result<(Located, usize), PhotoError> {
    let mut scored = score(model, image, &[a8_h8_h1_a1], known)?;
    for (turns, s) in scored.iter_mut().enumerate() {
        s.0 += if turns == 0 { (1.0 - MISORDERED).ln() } else { (MISORDERED / 3.0).ln() };
    }
    let turns = best(&scored).unwrap_or(0);
    Ok((best_of(scored)?, turns))
}

/// The best of these grids (playing areas in image order) and orientations for `image`.
pub fn locate_among(model: &mut Model, image: &Mat, grids: &[[Px; 4]], known: Option<&Board>) -> Result<Located, PhotoError> {
    best_of(score(model, image, grids, known)?)
}

/// Each grid in each of its four turns (corners a8, h8, h1, a1), its reading, and the score of
/// that reading: the chequer's, plus the known position's or the likeliest game position's.
fn score(model: &mut Model, image: &Mat, grids: &[[Px; 4]], known: Option<&Board>) -> Result<Vec<(f64, [Px; 4], Reading)>, PhotoError> {
    let mut scored = Vec::new();
    for grid in grids {
        // The position known decides the turn; else the coordinates printed, where there are.
        let fit = known.is_none().then(|| glyph_fit(image, *grid));
        scored.extend(score_grid(model, image, *grid, known, fit)?);
    }
    Ok(scored)
}

/// [`score`] for one grid, whose [`glyph_fit`] is `fit` when its coordinates count.
fn score_grid(model: &mut Model, image: &Mat, grid: [Px; 4], known: Option<&Board>, fit: Option<[f64; 4]>) -> Result<Vec<(f64, [Px; 4], Reading)>, PhotoError> {
    let size = [image.cols().max(0) as u32, image.rows().max(0) as u32];
    // A grid too skewed to warp shows no chequer.
    let chequer = orientation::chequer(image, grid).unwrap_or(0.0);
    let printed = fit.map_or([0.0; 4], printed);
    let mut scored = Vec::with_capacity(4);
    for turns in 0..4 {
        let corners: [Px; 4] = std::array::from_fn(|i| grid[(i + turns) % 4]);
        let cal = Calibration::from_corners(String::new(), 0, size, corners, WhiteEdge::Bottom, Found::Auto)?;
        let reading = model.read(&cal.warp(image, model.layout())?, 0, 0.0)?;
        let score = set_up(if turns % 2 == 0 { chequer } else { -chequer })
            + printed[turns]
            + match known {
                Some(board) => agreement(&reading, board),
                None => plausibility(&reading),
            };
        scored.push((score, corners, reading));
    }
    Ok(scored)
}

/// The grid's [`coordinates::glyph_fit`]; a grid too skewed to warp shows no coordinates.
fn glyph_fit(image: &Mat, grid: [Px; 4]) -> [f64; 4] {
    coordinates::glyph_fit(image, grid).unwrap_or([0.0; 4])
}

/// Where the highest score is.
fn best(scored: &[(f64, [Px; 4], Reading)]) -> Option<usize> {
    (0..scored.len()).max_by(|&a, &b| scored[a].0.total_cmp(&scored[b].0))
}

/// The best scored grid and turn, with how sure it is among all those scored.
fn best_of(mut scored: Vec<(f64, [Px; 4], Reading)>) -> Result<Located, PhotoError> {
    let Some(i) = best(&scored) else { return Err(PhotoError::NoBoard) };
    let top = scored[i].0;
    let total: f64 = scored.iter().map(|s| (s.0 - top).exp()).sum();
    let tried = scored.len();
    let (_, corners, reading) = scored.swap_remove(i);
    Ok(Located { corners, reading, sure: 1.0 / total, tried })
}

/// The logistic function.
fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// The log-probability that a board whose [`orientation::chequer`] reads `chequer` (its corners
/// taken as a8, h8, h1, a1) lies so: a light square at each player's right.
fn set_up(chequer: f64) -> f64 {
    (MISSET + (1.0 - 2.0 * MISSET) * sigmoid(CHEQUER_SLOPE * chequer)).ln()
}

/// The log-probability of each turn of a grid on its printed coordinates alone (their
/// [`coordinates::glyph_fit`]), the four equally likely before.
fn printed(fit: [f64; 4]) -> [f64; 4] {
    let all = log_sum_exp(fit.map(|f| COORDINATE_SLOPE * f));
    fit.map(|f| COORDINATE_SLOPE * f - all)
}

/// The log Bayes factor, on a grid's [`coordinates::glyph_fit`], of coordinates printed around
/// it (one turn favoured as [`printed`] favours it) against none (the four turns alike): near 0
/// for a board without coordinates, or a grid they do not line up with.
fn alignment(fit: [f64; 4]) -> f64 {
    let mean = fit.iter().sum::<f64>() / 4.0;
    log_sum_exp(fit.map(|f| COORDINATE_SLOPE * (f - mean))) - 4f64.ln()
}

/// ln(sum of e^x), without overflow.
fn log_sum_exp(xs: [f64; 4]) -> f64 {
    let top = xs.iter().copied().fold(f64::MIN, f64::max);
    top + xs.iter().map(|x| (x - top).exp()).sum::<f64>().ln()
}

/// The log-likelihood of `board` under the reading (each square floored).
pub fn agreement(reading: &Reading, board: &Board) -> f64 {
    Square::ALL.iter().map(|&sq| f64::from(reading.square(sq).classes[piece_class(board.piece_at(sq))]).max(FLOOR).ln()).sum()
}

/// The log-probability of the most likely position a game could show under the reading, White
/// at the bottom ([`position::likeliest`]), and of White's army nearer rank 1.
pub fn plausibility(reading: &Reading) -> f64 {
    position::likeliest(reading).1 + army(reading)
}

/// The log-probability that White sits at the bottom given the armies' mean ranks.
fn army(reading: &Reading) -> f64 {
    army_gap(reading).map_or(0.0, |gap| sigmoid(ARMY_SLOPE * gap).ln())
}

/// How many ranks further up the board Black's army stands than White's, on average (each
/// square weighted by the reading's chance of each colour); `None` where a colour is missing.
pub fn army_gap(reading: &Reading) -> Option<f64> {
    let mean_rank = |color: Color| {
        let (mut sum, mut weight) = (0.0, 0.0);
        for sq in Square::ALL {
            let p = f64::from(reading.square(sq).color(color));
            sum += p * f64::from(u32::from(sq.rank()));
            weight += p;
        }
        if weight > 0.5 { Some(sum / weight) } else { None }
    };
    Some(mean_rank(Color::Black)? - mean_rank(Color::White)?)
}
