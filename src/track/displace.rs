//! Displacement: what a touch does to the piece it touches. A grasp, a press or an adjustment
//! slides a piece a millimetre or turns it a few degrees; a hand passing over it does not. Each
//! square's view in the warped board is kept from the last frame no hand was near it; when a
//! hand has visited and gone, the view after is compared with the view before:
//! - `change`, one minus the normalised cross-correlation of the two (blind to a change of
//!   light or exposure, which scales and offsets the pixels);
//! - `shift`, the translation phase correlation finds between them, in pixels.
//!
//! Both are weighed against the camera's noise floor: the same two measures between views of
//! occupied squares a still stretch apart (sensor noise, compression, light flicker), their
//! 95th percentile over the last [`NOISE_KEPT`] such pairs. A visit whose change stands
//! [`Visit::z`] times above that floor moved the piece; [`touch_probability`] turns the two
//! ratios into the probability that the piece was touched, with coefficients fitted on the
//! rendered clips (see its comment). On footage too dark or too blurred the floor is high and
//! no visit stands out: nothing is said to have been touched.

use opencv::core::{Mat, Point2d, Rect, Size};
use opencv::prelude::*;
use opencv::{core, imgproc};
use shakmaty::{Bitboard, Square};

use crate::board::Layout;
use crate::detect::Reading;
use crate::events::Hand;
use super::sight::Picture;

/// A hand is near a square when it covers this much of it, or a cell of its hand map at the
/// tracker's `hand_min` lies within half a square of it.
const NEAR_COVER: f32 = 0.02;
/// The scale of light and shade (pixels of the warped board, about a sixth of a square) below
/// which the views are compared: the local mean is taken over a box this far each way.
const SHADE_RADIUS: i32 = 8;
/// A touch that leaves its piece on the square moves it a few millimetres: a view shifted by
/// more than this part of a square shows another scene (the piece moved off and back, or
/// another piece), which is the game's to read, not a touch's.
const SHIFT_MAX: f64 = 1.0 / 8.0;
/// Readings kept of one visit (a hand resting by a piece for minutes is not kept frame by frame).
const NEAR_KEPT: usize = 256;
/// A touch comes this long (seconds) after the hand first comes near the piece: the median over
/// the touches of the clips `W` was fitted on (10th to 90th percentile 0.30 to 0.84 s), printed
/// by `training/fit_touch.py`. The view of the piece under the fingers does not date it better:
/// the hand hides the piece until it leaves.
const APPROACH_S: f64 = 0.46;
/// The events after a visit's start wait this long at most (seconds) for it to be measured: a
/// hand resting by a piece does not hold back the rest of the game.
const VISIT_HOLD_S: f64 = 3.0;
/// Visits kept waiting for the noise floor at most (a camera never still long enough to
/// measure it would otherwise keep them all).
const UNMEASURED_KEPT: usize = 64;
/// Still pairs for the noise floor are at least this far apart (seconds).
const NOISE_GAP_S: f64 = 0.5;
/// Still pairs the noise floor is taken over.
const NOISE_KEPT: usize = 512;
/// Still pairs needed before the floor is trusted: until then no visit is measured against it.
const NOISE_MIN: usize = 32;
/// The floor is never taken lower than this (a render, or a camera with no noise at all, would
/// otherwise make every re-encoding a touch).
const CHANGE_FLOOR: f64 = 0.002;
/// The same for the shift, in pixels.
const SHIFT_FLOOR: f64 = 0.05;
/// Two views a frame apart are the same still scene when their change is at most this many
/// times the noise floor's,
const STILL_Z: f64 = 1.5;
/// or, until the floor is known, at most this.
const BOOT_STILL: f64 = 0.03;

/// A hand's visit to a square that it left with its piece still there, measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Visit {
    /// The square.
    pub sq: Square,
    /// The first reading a hand was near it.
    pub from: f64,
    /// The first view with no hand near it again.
    pub to: f64,
    /// When in the visit the piece was most likely touched: the reading of the strongest contact
    /// (else of the greatest cover) soon after the hand first covered it.
    pub at: f64,
    /// The hand nearest the square then.
    pub hand: Option<Hand>,
    /// One minus the normalised cross-correlation of the views before and after.
    pub change: f32,
    /// The translation between them, in warped pixels.
    pub shift: f32,
    /// `change` over the noise floor.
    pub z: f32,
    /// `shift` over its noise floor.
    pub shift_z: f32,
    /// What the board model read of contact meanwhile.
    pub contact: Contact,
    /// The probability that the piece was touched.
    pub p: f32,
}

/// What the board model read of a square's contact and cover while a hand was near it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Contact {
    /// The greatest contact read.
    pub max: f32,
    /// Seconds from the first to the last reading of contact at [`CONTACT_HELD`] or more.
    pub held_s: f32,
    /// The greatest part of the square a hand covered.
    pub cover: f32,
}

/// A contact read at least this strongly counts as the fingers on the piece for `held_s`.
const CONTACT_HELD: f32 = 0.5;

/// The probability that a piece was touched: a logistic model in what the touch did to it, how
/// far its view changed above the noise floor (`z`) and how far it shifted above it (`shift_z`),
/// in what the board model read meanwhile (`contact`) and in how long the hand stayed
/// (`stay`, seconds: a hand passing over a piece stays a frame or two, fingers on it longer),
/// `1 / (1 + exp(-(W . x)))` with `x = [1, ln z, ln shift_z, contact.max, contact.held_s (at
/// most HELD_MAX_S), contact.cover, ln (stay + STAY_MIN_S)]`. `W` is fitted by
/// `training/fit_touch.py` on the visits of touch-heavy rendered clips (`python -m
/// render.touches`, seeds 50000 on; see `docs/measuring.md`).
pub fn touch_probability(z: f32, shift_z: f32, contact: Contact, stay: f32) -> f32 {
    const W: [f32; 7] = [-2.356, -0.260, 1.891, 0.952, 1.117, -2.800, 1.278];
    const HELD_MAX_S: f32 = 2.0;
    const STAY_MIN_S: f32 = 0.05;
    let x = [1.0, z.max(1e-3).ln(), shift_z.max(1e-3).ln(), contact.max, contact.held_s.min(HELD_MAX_S), contact.cover, (stay.max(0.0) + STAY_MIN_S).ln()];
    let logit: f32 = W.iter().zip(x).map(|(w, x)| w * x).sum();
    1.0 / (1.0 + (-logit).exp())
}

/// One reading of a square while a hand is near it.
#[derive(Clone, Copy, Debug)]
struct Look {
    t: f64,
    /// The contact read (NaN where the model gives none).
    contact: f32,
    cover: f32,
    hand: Option<Hand>,
}

/// The evidence of a square while a hand is near it.
#[derive(Clone, Debug)]
struct Near {
    from: f64,
    /// The readings, at most [`NEAR_KEPT`], the first ones.
    looks: Vec<Look>,
}

impl Near {
    /// When the piece was most likely touched, and by which hand: [`APPROACH_S`] after the hand
    /// first came near (no later than its last reading near), by the hand read nearest then.
    fn touched(&self) -> (f64, Option<Hand>) {
        let last = self.looks.last().map_or(self.from, |l| l.t);
        let at = (self.from + APPROACH_S).min(last);
        let hand = self.looks.iter().filter(|l| l.hand.is_some()).min_by(|a, b| (a.t - at).abs().total_cmp(&(b.t - at).abs())).and_then(|l| l.hand);
        (at, hand)
    }

    /// The contact and cover read over the visit.
    fn evidence(&self) -> Contact {
        let contact = |l: &Look| if l.contact.is_nan() { 0.0 } else { l.contact };
        // The looks are in time order: the first and the last held.
        let mut held = self.looks.iter().filter(|l| contact(l) >= CONTACT_HELD).map(|l| l.t);
        let first = held.next();
        Contact {
            max: self.looks.iter().map(contact).fold(0.0, f32::max),
            held_s: first.map_or(0.0, |a| (held.next_back().unwrap_or(a) - a) as f32),
            cover: self.looks.iter().map(|l| l.cover).fold(0.0, f32::max),
        }
    }
}

#[derive(Clone, Debug)]
enum State {
    /// Not seen clear yet.
    Unseen,
    /// No hand near: `still` is its last still view (one the next view agreed with), `anchor` the still view the next noise pair is measured from, `last` the last view,
    /// to test the next against.
    Clear { still: Option<Mat>, anchor: Option<(Mat, f64)>, last: Mat },
    /// A hand is near, or was and the square has not been seen still since: the still view
    /// before, and the last view since no hand was near (the candidate view after).
    Visited { before: Mat, near: Near, after: Option<(Mat, f64)> },
}

/// A visit whose square's view has settled: the views before and after, to measure.
#[derive(Clone, Debug)]
struct Settled {
    sq: Square,
    before: Mat,
    after: Mat,
    near: Near,
    /// The first view with no hand near again.
    to: f64,
}

impl Settled {
    /// The visit measured against the noise `floor` (change, shift); none where the view
    /// shifted too far to be the same piece.
    fn measure(&self, (change_floor, shift_floor): (f64, f64), window: &Mat) -> opencv::Result<Option<Visit>> {
        let (change, shift) = compare(&self.before, &self.after, window)?;
        if f64::from(shift) > SHIFT_MAX * f64::from(self.after.cols()) {
            return Ok(None);
        }
        let (z, shift_z) = ((f64::from(change) / change_floor) as f32, (f64::from(shift) / shift_floor) as f32);
        let (at, hand) = self.near.touched();
        let contact = self.near.evidence();
        let p = touch_probability(z, shift_z, contact, (self.to - self.near.from) as f32);
        Ok(Some(Visit { sq: self.sq, from: self.near.from, to: self.to, at, hand, change, shift, z, shift_z, contact, p }))
    }
}

/// The camera's noise floor: `change` and `shift` of still pairs.
#[derive(Clone, Debug, Default)]
struct Noise {
    pairs: std::collections::VecDeque<(f32, f32)>,
}

impl Noise {
    fn push(&mut self, change: f32, shift: f32) {
        if self.pairs.len() == NOISE_KEPT {
            self.pairs.pop_front();
        }
        self.pairs.push_back((change, shift));
    }

    /// The 95th percentiles, once enough pairs were seen.
    fn floor(&self) -> Option<(f64, f64)> {
        if self.pairs.len() < NOISE_MIN {
            return None;
        }
        let q = |mut v: Vec<f32>| {
            v.sort_by(f32::total_cmp);
            f64::from(v[(v.len() * 95 / 100).min(v.len() - 1)])
        };
        Some((q(self.pairs.iter().map(|p| p.0).collect()).max(CHANGE_FLOOR), q(self.pairs.iter().map(|p| p.1).collect()).max(SHIFT_FLOOR)))
    }
}

/// Every square's view and visits.
#[derive(Clone, Debug)]
pub struct Stills {
    squares: Vec<State>,
    /// Per square, as of the last reading: whether a hand is near, with its evidence.
    near: [Option<Look>; 64],
    noise: Noise,
    /// Visits settled before the noise floor was known, oldest first.
    unmeasured: Vec<Settled>,
    window: Mat,
    gray: Mat,
    /// The board's blur and contrast to noise, measured at most every [`NOISE_GAP_S`] on frames
    /// with no hand near.
    picture: Picture,
    picture_t: f64,
    /// The last frame measured, and its time, while no hand has been near since.
    clear: Option<(Mat, f64)>,
    /// Pixels a square, in the last warp.
    square: u32,
}

impl Default for Stills {
    fn default() -> Stills {
        Stills {
            squares: vec![State::Unseen; 64],
            near: [None; 64],
            noise: Noise::default(),
            unmeasured: Vec::new(),
            window: Mat::default(),
            gray: Mat::default(),
            picture: Picture::default(),
            picture_t: f64::NEG_INFINITY,
            clear: None,
            square: 0,
        }
    }
}

impl Stills {
    /// Takes in where the hands are at `reading`: `hand_min` is the hand map's threshold, and
    /// `nearest` names the hand nearest a square.
    pub fn hands(&mut self, reading: &Reading, hand_min: f32, nearest: impl Fn(Square) -> Option<Hand>) {
        let map = &reading.hands;
        for sq in Square::ALL {
            let i = usize::from(sq);
            let square = reading.square(sq);
            let (rows, cols) = map.cells(sq);
            let reach = map.cells_per_square / 2;
            let (r0, r1) = (rows.start.saturating_sub(reach), (rows.end + reach).min(map.side));
            let (c0, c1) = (cols.start.saturating_sub(reach), (cols.end + reach).min(map.side));
            let in_map = (r0..r1).any(|r| (c0..c1).any(|c| map.white[r * map.side + c] >= hand_min || map.black[r * map.side + c] >= hand_min));
            let near = in_map || square.cover >= NEAR_COVER;
            self.near[i] = near.then(|| Look { t: reading.t, contact: square.contact, cover: square.cover, hand: nearest(sq) });
            if let Some(look) = self.near[i] {
                let t = reading.t;
                match &mut self.squares[i] {
                    State::Clear { still: Some(_), .. } => {
                        let State::Clear { still: Some(before), .. } = std::mem::replace(&mut self.squares[i], State::Unseen) else { unreachable!() };
                        self.squares[i] = State::Visited { before, near: Near { from: t, looks: vec![look] }, after: None };
                    }
                    State::Visited { near, after, .. } => {
                        // The hand is back: the view after is yet to come.
                        *after = None;
                        if near.looks.len() < NEAR_KEPT {
                            near.looks.push(look);
                        }
                    }
                    // Never seen still: nothing to compare with.
                    State::Clear { still: None, .. } | State::Unseen => {}
                }
            }
        }
    }

    /// Takes in the warped board at `t` (8-bit BGR, 9 squares a side with the margin); appends
    /// to `out` the visits to the squares of `occupied` that ended now. The hands are as the
    /// last reading had them. A view is still when the next agrees with it within the noise
    /// floor (a hand's shadow or an arm leaving is not); a visit ends at the first still view
    /// after it, and is measured against the last still view before it.
    pub fn look(&mut self, t: f64, warped: &Mat, occupied: Bitboard, out: &mut Vec<Visit>) -> opencv::Result<()> {
        let side = warped.cols();
        if side < 18 || warped.rows() != side {
            return Ok(());
        }
        // The model's layout: a square a ninth of the side, half a square of margin.
        let layout = Layout { square: (side / 9) as u32, margin: (side / 18) as u32 };
        let square = layout.square as i32;
        imgproc::cvt_color(warped, &mut self.gray, imgproc::COLOR_BGR2GRAY, 0)?;
        self.square = layout.square;
        if self.near.iter().all(Option::is_none) {
            if t - self.picture_t >= NOISE_GAP_S {
                self.picture.sample(&self.gray, layout, self.clear.as_ref().map(|(m, then)| (m, t - then)))?;
                self.picture_t = t;
                self.clear = Some((self.gray.clone(), t));
            }
        } else {
            self.clear = None;
        }
        if self.window.rows() != square {
            imgproc::create_hanning_window(&mut self.window, Size::new(square, square), core::CV_32F)?;
        }
        let floor = self.noise.floor();
        if let Some(floor) = floor {
            for settled in std::mem::take(&mut self.unmeasured) {
                out.extend(settled.measure(floor, &self.window)?);
            }
        }
        let still_max = floor.map_or(BOOT_STILL, |(change, _)| STILL_Z * change);
        for sq in Square::ALL {
            let i = usize::from(sq);
            let (x, y, w, h) = layout.square_rect(sq);
            let rect = Rect::new(x as i32, y as i32, w as i32, h as i32);
            if self.near[i].is_some() {
                // A hand near: the view is the hand's, not the piece's.
                continue;
            }
            if !occupied.contains(sq) {
                // No piece to touch: nothing kept (a piece set down is seen from then on).
                self.squares[i] = State::Unseen;
                continue;
            }
            let view = crop(&self.gray, rect)?;
            match std::mem::replace(&mut self.squares[i], State::Unseen) {
                State::Unseen => self.squares[i] = State::Clear { still: None, anchor: None, last: view },
                State::Clear { still, anchor, last } => {
                    if f64::from(change(&last, &view)?) > still_max {
                        self.squares[i] = State::Clear { still, anchor, last: view };
                        continue;
                    }
                    // Still. The floor is measured across a still stretch, on pieces.
                    let anchor = match anchor {
                        Some((was, then)) if t - then < NOISE_GAP_S => Some((was, then)),
                        Some((was, _)) => {
                            let (change, shift) = compare(&was, &view, &self.window)?;
                            self.noise.push(change, shift);
                            Some((view.clone(), t))
                        }
                        None => Some((view.clone(), t)),
                    };
                    self.squares[i] = State::Clear { still: Some(view.clone()), anchor, last: view };
                }
                State::Visited { before, near, after } => {
                    let settled = match &after {
                        Some((candidate, _)) => f64::from(change(candidate, &view)?) <= still_max,
                        None => false,
                    };
                    if !settled {
                        self.squares[i] = State::Visited { before, near, after: Some((view, t)) };
                        continue;
                    }
                    let to = after.map_or(t, |(_, then)| then);
                    let settled = Settled { sq, before, after: view.clone(), near, to };
                    match floor {
                        Some(floor) => out.extend(settled.measure(floor, &self.window)?),
                        None => {
                            // The camera's noise is not known yet (the footage has just begun):
                            // measured once it is.
                            if self.unmeasured.len() == UNMEASURED_KEPT {
                                self.unmeasured.remove(0);
                            }
                            self.unmeasured.push(settled);
                        }
                    }
                    self.squares[i] = State::Clear { still: Some(view.clone()), anchor: Some((view.clone(), t)), last: view };
                }
            }
        }
        Ok(())
    }

    /// The board's blur, σ in squares, and its contrast to noise (see `sight`).
    pub fn picture(&self) -> (Option<f64>, Option<f64>) {
        (self.picture.blur(), self.picture.contrast_to_noise())
    }

    /// The camera's noise floor: the change between still views of a piece, and their shift
    /// in squares.
    pub fn floor(&self) -> Option<(f64, f64)> {
        let square = f64::from(self.square.max(1));
        self.noise.floor().map(|(change, shift)| (change, shift / square))
    }

    /// The squares of the visits yet to be measured: a hand is near, or left and the view has
    /// not settled, or it has and the noise floor is not known yet.
    pub fn visiting(&self) -> Bitboard {
        let unmeasured: Bitboard = self.unmeasured.iter().map(|v| v.sq).collect();
        unmeasured | Square::ALL.into_iter().filter(|&sq| matches!(self.squares[usize::from(sq)], State::Visited { .. })).collect::<Bitboard>()
    }

    /// The earliest start of a visit yet to be measured that began less than [`VISIT_HOLD_S`]
    /// before `now` (a touch it shows is dated after it); infinity with none.
    pub fn pending_since(&self, now: f64) -> f64 {
        let from = |s: &State| match s {
            State::Visited { near, .. } if near.from >= now - VISIT_HOLD_S => Some(near.from),
            _ => None,
        };
        let unmeasured = self.unmeasured.iter().map(|v| v.near.from).filter(|&from| from >= now - VISIT_HOLD_S);
        self.squares.iter().filter_map(from).chain(unmeasured).fold(f64::INFINITY, f64::min)
    }

    /// The views and the noise floor kept, the visits under way dropped: the tracker starts
    /// again from another board, and whether their pieces stayed is no longer known.
    pub fn restart(&mut self) {
        self.unmeasured.clear();
        for state in &mut self.squares {
            if matches!(state, State::Visited { .. }) {
                *state = State::Unseen;
            }
        }
    }
}

/// The view of `gray`'s `rect` that a touch changes and a shadow does not: the log of the
/// light, lightly smoothed (a pixel's noise is not the piece's), less its local mean over
/// [`SHADE_RADIUS`] pixels. A hand's shadow or a change of light scales the light smoothly, which
/// the log turns into a smooth offset and the subtraction removes; a piece's edges stay.
fn crop(gray: &Mat, rect: Rect) -> opencv::Result<Mat> {
    let roi = Mat::roi(gray, rect)?;
    let mut f = Mat::default();
    roi.convert_to(&mut f, core::CV_32F, 1.0, 1.0)?;
    let mut log = Mat::default();
    core::log(&f, &mut log)?;
    let mut smooth = Mat::default();
    imgproc::gaussian_blur(&log, &mut smooth, Size::new(3, 3), 0.8, 0.8, core::BORDER_REFLECT)?;
    let mut shade = Mat::default();
    let k = 2 * SHADE_RADIUS + 1;
    imgproc::blur(&smooth, &mut shade, Size::new(k, k), core::Point::new(-1, -1), core::BORDER_REFLECT)?;
    let mut view = Mat::default();
    core::subtract(&smooth, &shade, &mut view, &core::no_array(), -1)?;
    Ok(view)
}

/// `change` (one minus the normalised cross-correlation) and `shift` (phase correlation, in
/// pixels) between two views of a square.
pub fn compare(before: &Mat, after: &Mat, window: &Mat) -> opencv::Result<(f32, f32)> {
    // Windowed into copies: OpenCV's phase correlation multiplies its inputs by the window in
    // place where they need no padding.
    let (mut a, mut b) = (Mat::default(), Mat::default());
    core::multiply(before, window, &mut a, 1.0, -1)?;
    core::multiply(after, window, &mut b, 1.0, -1)?;
    let Point2d { x, y } = imgproc::phase_correlate(&a, &b, &core::no_array(), None)?;
    Ok((change(before, after)?, x.hypot(y) as f32))
}

/// One minus the normalised cross-correlation of two views of a square (0 for the same view).
fn change(before: &Mat, after: &Mat) -> opencv::Result<f32> {
    let mut result = Mat::default();
    imgproc::match_template(after, before, &mut result, imgproc::TM_CCOEFF_NORMED, &core::no_array())?;
    let ncc = *result.at_2d::<f32>(0, 0)?;
    Ok(if ncc.is_finite() { (1.0 - ncc).max(0.0) } else { 0.0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A textured square view, `side` pixels, the piece (a bright disc with a dark notch) at
    /// (`cx`, `cy`) turned by `turn` radians, with Gaussian noise of `sigma`.
    fn piece(side: i32, cx: f64, cy: f64, turn: f64, sigma: f64, seed: u64) -> Mat {
        let mut m = Mat::new_rows_cols_with_default(side, side, core::CV_32F, core::Scalar::all(0.0)).unwrap();
        let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let mut noise = || {
            // Box-Muller from a small LCG: reproducible noise without a dependency.
            let mut u = || {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
            };
            (-2.0 * u().ln()).sqrt() * (2.0 * std::f64::consts::PI * u()).cos()
        };
        for y in 0..side {
            for x in 0..side {
                let (dx, dy) = (f64::from(x) - cx, f64::from(y) - cy);
                let r = dx.hypot(dy);
                let a = dy.atan2(dx) - turn;
                let board = if (x / 6 + y / 6) % 2 == 0 { 90.0 } else { 120.0 };
                let disc = if r < 14.0 { 200.0 - 40.0 * (a.cos() > 0.8) as i32 as f64 * (r > 5.0) as i32 as f64 } else { board };
                *m.at_2d_mut::<f32>(y, x).unwrap() = (disc + sigma * noise()) as f32;
            }
        }
        m
    }

    fn window(side: i32) -> Mat {
        let mut w = Mat::default();
        imgproc::create_hanning_window(&mut w, Size::new(side, side), core::CV_32F).unwrap();
        w
    }

    #[test]
    fn a_known_shift_is_found_and_noise_alone_is_not() {
        let w = window(48);
        let before = piece(48, 24.0, 24.0, 0.0, 2.0, 1);
        // Noise alone: a second exposure of the same scene.
        let still = piece(48, 24.0, 24.0, 0.0, 2.0, 2);
        let (change_still, shift_still) = compare(&before, &still, &w).unwrap();
        // The piece slid 1.5 px (about 2 mm at 48 px a 62 mm square).
        let slid = piece(48, 25.2, 24.9, 0.0, 2.0, 3);
        let (change_slid, shift_slid) = compare(&before, &slid, &w).unwrap();
        assert!(shift_still < 0.3, "noise alone shifts {shift_still} px");
        assert!((shift_slid - 1.5).abs() < 0.5, "a 1.5 px slide read {shift_slid} px");
        assert!(change_slid > 4.0 * change_still, "change {change_slid} against noise {change_still}");
    }

    #[test]
    fn a_known_turn_changes_the_view_where_noise_does_not() {
        let w = window(48);
        let before = piece(48, 24.0, 24.0, 0.0, 2.0, 1);
        let still = piece(48, 24.0, 24.0, 0.0, 2.0, 2);
        let turned = piece(48, 24.0, 24.0, 8f64.to_radians() * 3.0, 2.0, 3);
        let (change_still, _) = compare(&before, &still, &w).unwrap();
        let (change_turned, _) = compare(&before, &turned, &w).unwrap();
        assert!(change_turned > 3.0 * change_still, "a turn changed {change_turned}, noise {change_still}");
    }

    #[test]
    fn the_probability_grows_with_the_evidence() {
        // At the noise floor a visit is no touch; a piece shifted twenty times the floor's shift
        // (a few millimetres) by a hand that stayed a second is one; so is a piece barely moved
        // that the fingers were read on for a second.
        let none = Contact::default();
        let held = Contact { max: 0.9, held_s: 1.0, cover: 0.3 };
        assert!(touch_probability(1.0, 1.0, none, 1.0) < 0.1);
        assert!(touch_probability(40.0, 20.0, none, 1.0) > 0.8);
        assert!(touch_probability(5.0, 1.0, none, 1.0) < touch_probability(5.0, 5.0, none, 1.0));
        assert!(touch_probability(5.0, 5.0, none, 1.0) < touch_probability(5.0, 5.0, held, 1.0));
        assert!(touch_probability(5.0, 5.0, none, 0.1) < touch_probability(5.0, 5.0, none, 1.0), "a hand passing over");
    }
}
