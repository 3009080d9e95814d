//! Sight: whether the footage is sharp enough to see a touch. A fingertip on a piece
//! is a few millimetres of skin against the piece's edge, and a touch moves the piece about a
//! millimetre (see `displace`). Footage too blurred shows neither, and a touch read there is a
//! guess: the tracker reports none, and the summary says why.
//!
//! Two measures, each of the camera, not of the game (the second reported, not yet judged):
//! - the board's **blur**: the Gaussian σ of the edges between squares, in squares. An edge
//!   blurred by σ rises by `h` with a steepest slope of `h / (σ √(2π))`; each frame with no
//!   hand over the board gives the median over its sharpest-contrast square edges (the light
//!   and dark squares' own, where no piece stands across them), the median over the last
//!   [`KEPT`] such frames is the footage's.
//! - the picture's **contrast to noise**: the height of those edges (light square against dark)
//!   over the camera's noise, the spread of the difference between two frames half a second
//!   or more apart with no hand over the board between them, once the second is fitted as a
//!   gain and offset of the first (a trimmed root mean square, over √2). A dim room lowers the
//!   first, sensor gain and hard compression raise the second.

use std::collections::VecDeque;

use opencv::core::{self, Mat, Rect};
use opencv::prelude::*;

use crate::board::Layout;

/// Edges blurred by more than this (σ, in squares) hide a fingertip: it is a fifth of a square
/// wide (a 10 mm fingertip on a 50 mm square), and a blur of σ spreads an edge over 2.5 σ.
pub const BLUR_MAX: f64 = 0.08;
/// Frames further apart than this (seconds) are not compared for the noise (the motion gate
/// passes over still stretches, so two frames measured may be seconds apart; their light is
/// fitted, but not a piece moved by a hand the map missed).
const PAIR_S: f64 = 5.0;
/// The share of a frame difference's pixels kept for the noise (the rest may be a piece or a
/// shadow that moved).
const NOISE_KEPT: f64 = 0.9;
/// Frames whose blur is kept.
const KEPT: usize = 64;
/// Frames needed before the blur is trusted.
const MIN_FRAMES: usize = 4;
/// Of a frame's square edges, the share with the most contrast that is measured (the others
/// have a piece across them, or two squares of a colour).
const SHARPEST: f64 = 0.25;

/// What the footage lets the tracker see of a touch.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Sight {
    /// Whether touches are reported.
    pub reported: bool,
    /// Why not, where they are not.
    pub why: Option<&'static str>,
    /// The board's blur, σ in squares (none before a frame with no hand over the board).
    pub blur_squares: Option<f64>,
    /// The squares' contrast over the camera's noise (none before two frames half a second apart
    /// with no hand over the board).
    pub contrast_to_noise: Option<f64>,
    /// `displace`'s noise floor: the change between still views of a piece, 95th percentile
    /// (none before the board was still long enough).
    pub noise_change: Option<f64>,
    /// The same for the shift phase correlation reads between them, in squares.
    pub noise_shift_squares: Option<f64>,
    /// Touches read but not reported since the footage showed them too poorly.
    pub withheld: u64,
}

impl Sight {
    /// The verdict on footage of `blur`, `contrast` to noise and noise floor `noise`: (change,
    /// shift in squares). Until the blur is known it does not count against the footage. The
    /// contrast to noise is reported, not yet judged: on the rendered clips it overlaps the
    /// copies with sensor noise of σ 12 grey levels, where touches are mostly wrong.
    pub fn judge(blur: Option<f64>, contrast: Option<f64>, noise: Option<(f64, f64)>, withheld: u64) -> Sight {
        let why = if blur.is_some_and(|b| b > BLUR_MAX) {
            Some("the board's edges are too blurred to show a fingertip on a piece")
        } else {
            None
        };
        Sight { reported: why.is_none(), why, blur_squares: blur, contrast_to_noise: contrast, noise_change: noise.map(|n| n.0), noise_shift_squares: noise.map(|n| n.1), withheld }
    }
}

/// The board's blur and contrast to noise over the frames with no hand near it.
#[derive(Clone, Debug, Default)]
pub struct Picture {
    /// Per frame measured: blur σ in squares, and the edges' height.
    frames: VecDeque<(f64, f64)>,
    /// The camera's noise, per pair of frames measured.
    noise: VecDeque<f64>,
    /// The profile across an edge, reused.
    strip: Mat,
}

impl Picture {
    /// Measures the blur and height of the edges of `gray` (the warped board, 8-bit) laid out
    /// as `layout`, and the noise between it and `before`, a frame `gap` seconds earlier with no
    /// hand over the board either, nor between.
    pub fn sample(&mut self, gray: &Mat, layout: Layout, before: Option<(&Mat, f64)>) -> opencv::Result<()> {
        if let Some((sigma, height)) = self.edges(gray, layout)? {
            if self.frames.len() == KEPT {
                self.frames.pop_front();
            }
            self.frames.push_back((sigma / f64::from(layout.square), height));
        }
        if let Some((before, gap)) = before
            && gap <= PAIR_S
            && before.size()? == gray.size()?
        {
            if self.noise.len() == KEPT {
                self.noise.pop_front();
            }
            self.noise.push_back(noise(before, gray)?);
        }
        Ok(())
    }

    /// The median blur of the frames kept, σ in squares.
    pub fn blur(&self) -> Option<f64> {
        (self.frames.len() >= MIN_FRAMES).then(|| median(self.frames.iter().map(|f| f.0).collect()))
    }

    /// The median height of the edges over the median noise.
    pub fn contrast_to_noise(&self) -> Option<f64> {
        (self.frames.len() >= MIN_FRAMES && self.noise.len() >= MIN_FRAMES)
            .then(|| median(self.frames.iter().map(|f| f.1).collect()) / median(self.noise.iter().copied().collect()).max(NOISE_LEAST))
    }

    /// σ in pixels and the height, medians over the frame's sharpest square edges.
    fn edges(&mut self, gray: &Mat, layout: Layout) -> opencv::Result<Option<(f64, f64)>> {
        let s = layout.square as i32;
        let m = layout.margin as i32;
        // Across an edge, a third of a square each way; along it, the middle half.
        let (across, along) = (s / 3, s / 2);
        if across < 4 {
            return Ok(None);
        }
        let mut measured = Vec::with_capacity(112);
        for i in 0..8 {
            for k in 1..8 {
                let (mid, line) = (m + i * s + s / 4, m + k * s);
                // The edge between two files, then between two ranks.
                for (rect, vertical) in [(Rect::new(line - across, mid, 2 * across, along), true), (Rect::new(mid, line - across, along, 2 * across), false)] {
                    let roi = Mat::roi(gray, rect)?;
                    let mut f = Mat::default();
                    roi.convert_to(&mut f, core::CV_32F, 1.0, 0.0)?;
                    // The mean along the edge: a row (vertical edge) or a column.
                    core::reduce(&f, &mut self.strip, if vertical { 0 } else { 1 }, core::REDUCE_AVG, core::CV_32F)?;
                    let profile: Vec<f32> = (0..2 * across).map(|j| *self.strip.at::<f32>(j).unwrap_or(&0.0)).collect();
                    measured.extend(step(&profile));
                }
            }
        }
        if measured.is_empty() {
            return Ok(None);
        }
        measured.sort_by(|a, b| b.0.total_cmp(&a.0));
        let n = ((measured.len() as f64 * SHARPEST).ceil() as usize).max(1);
        let sharpest = &measured[..n];
        Ok(Some((median(sharpest.iter().map(|&(_, sigma)| sigma).collect()), median(sharpest.iter().map(|&(h, _)| h).collect()))))
    }
}

/// The noise of a grey level no camera goes under (quantisation), which also bounds the ratio.
const NOISE_LEAST: f64 = 0.3;

/// The noise of one frame between `a` and `b`: the root mean square of what differs once `b`
/// is fitted as a gain and offset of `a` (light and exposure drift), over the [`NOISE_KEPT`]
/// share of pixels that differ least, over √2.
fn noise(a: &Mat, b: &Mat) -> opencv::Result<f64> {
    let (mut fa, mut fb) = (Mat::default(), Mat::default());
    a.convert_to(&mut fa, core::CV_32F, 1.0, 0.0)?;
    b.convert_to(&mut fb, core::CV_32F, 1.0, 0.0)?;
    let (ma, mb) = (core::mean(&fa, &core::no_array())?[0], core::mean(&fb, &core::no_array())?[0]);
    let mut ab = Mat::default();
    core::multiply(&fa, &fb, &mut ab, 1.0, -1)?;
    let mut aa = Mat::default();
    core::multiply(&fa, &fa, &mut aa, 1.0, -1)?;
    let var = core::mean(&aa, &core::no_array())?[0] - ma * ma;
    let gain = if var > 1e-6 { (core::mean(&ab, &core::no_array())?[0] - ma * mb) / var } else { 1.0 };
    let mut residual = Mat::default();
    core::add_weighted(&fb, 1.0, &fa, -gain, gain * ma - mb, &mut residual, -1)?;
    // In quarters of a grey level, saturated at 64 levels: a histogram gives the trimmed share.
    let mut quarters = Mat::default();
    core::convert_scale_abs(&residual, &mut quarters, 4.0, 0.0)?;
    let mut counts = [0u64; 256];
    for &d in quarters.data_typed::<u8>()? {
        counts[usize::from(d)] += 1;
    }
    let total: u64 = counts.iter().sum();
    let keep = (total as f64 * NOISE_KEPT) as u64;
    let (mut n, mut sum) = (0u64, 0.0);
    for (d, &c) in counts.iter().enumerate() {
        let take = c.min(keep - n);
        n += take;
        sum += take as f64 * (d * d) as f64 / 16.0;
        if n == keep {
            break;
        }
    }
    Ok((sum / n.max(1) as f64).sqrt() / std::f64::consts::SQRT_2)
}

/// The step across `profile`'s middle: its height (the means of its outer sixths) and the σ
/// of the Gaussian blur its steepest slope in the middle half gives.
fn step(profile: &[f32]) -> Option<(f64, f64)> {
    let n = profile.len();
    let sixth = (n / 6).max(1);
    let mean = |v: &[f32]| v.iter().map(|&x| f64::from(x)).sum::<f64>() / v.len() as f64;
    let height = (mean(&profile[..sixth]) - mean(&profile[n - sixth..])).abs();
    let slope = (n / 4..3 * n / 4).map(|j| f64::from((profile[j + 1] - profile[j - 1]).abs()) / 2.0).fold(0.0, f64::max);
    (height > 0.0 && slope > 0.0).then(|| (height, height / (slope * (2.0 * std::f64::consts::PI).sqrt())))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::*;
    use opencv::core::{Scalar, Size};
    use opencv::imgproc;

    /// A checkerboard laid out as the model's warp (no pieces), blurred by `sigma` pixels.
    fn board(sigma: f64) -> (Mat, Layout) {
        let layout = Layout { square: 32, margin: 16 };
        let side = layout.side() as i32;
        let mut img = Mat::new_rows_cols_with_default(side, side, core::CV_8U, Scalar::all(120.0)).unwrap();
        for r in 0..8 {
            for c in 0..8 {
                let v = if (r + c) % 2 == 0 { 200.0 } else { 60.0 };
                let rect = Rect::new(16 + c * 32, 16 + r * 32, 32, 32);
                imgproc::rectangle(&mut img, rect, Scalar::all(v), -1, imgproc::LINE_8, 0).unwrap();
            }
        }
        if sigma > 0.0 {
            let mut out = Mat::default();
            imgproc::gaussian_blur(&img, &mut out, Size::new(0, 0), sigma, sigma, core::BORDER_REFLECT).unwrap();
            img = out;
        }
        (img, layout)
    }

    fn blur_of(sigma: f64) -> f64 {
        let (img, layout) = board(sigma);
        let mut picture = Picture::default();
        for _ in 0..MIN_FRAMES {
            picture.sample(&img, layout, None).unwrap();
        }
        picture.blur().unwrap() * f64::from(layout.square)
    }

    #[test]
    fn the_contrast_to_noise_of_a_noisy_board_is_its_squares_step_over_the_noise() {
        let (img, layout) = board(1.0);
        let mut picture = Picture::default();
        let mut before: Option<Mat> = None;
        for _ in 0..=MIN_FRAMES {
            let mut noise = Mat::new_rows_cols_with_default(img.rows(), img.cols(), core::CV_32F, Scalar::all(0.0)).unwrap();
            core::randn(&mut noise, &Scalar::all(0.0), &Scalar::all(10.0)).unwrap();
            let mut f = Mat::default();
            img.convert_to(&mut f, core::CV_32F, 1.0, 0.0).unwrap();
            let mut sum = Mat::default();
            core::add(&f, &noise, &mut sum, &core::no_array(), -1).unwrap();
            let mut frame = Mat::default();
            sum.convert_to(&mut frame, core::CV_8U, 1.0, 0.0).unwrap();
            picture.sample(&frame, layout, before.as_ref().map(|b| (b, 0.04))).unwrap();
            before = Some(frame);
        }
        // A step of 140 grey levels over noise of σ 10 (the trimmed RMS reads it a little low).
        let cnr = picture.contrast_to_noise().unwrap();
        assert!((12.0..20.0).contains(&cnr), "{cnr}");
    }

    #[test]
    fn a_known_blur_of_the_squares_edges_is_measured() {
        for sigma in [1.5, 3.0, 5.0] {
            let read = blur_of(sigma);
            assert!((read - sigma).abs() < 0.15 * sigma, "σ {sigma} read as {read}");
        }
        // A sharp edge reads as the pixel it is.
        assert!(blur_of(0.0) < 1.0);
    }

    #[test]
    fn footage_too_blurred_reports_no_touch_and_says_why() {
        let floor = Some((0.04, 0.01));
        assert!(Sight::judge(Some(0.03), Some(100.0), floor, 0).reported);
        assert!(Sight::judge(None, None, None, 0).reported);
        let blurred = Sight::judge(Some(BLUR_MAX * 1.5), Some(100.0), floor, 3);
        assert!(!blurred.reported && blurred.why.unwrap().contains("blurred") && blurred.withheld == 3);
    }
}
