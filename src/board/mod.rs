//! Where the board is in the image: the calibration (the playing area's corners, White's edge,
//! the homography), saved as JSON under `calibration/`, and the warp of a frame to the
//! canonical top-down board (a8 top-left, White at the bottom).

pub mod coordinates;
pub mod corners;
pub mod drift;
pub mod orientation;

use std::path::Path;

use opencv::core::{Mat, Point2f, Scalar, Size, Vector};
use opencv::prelude::*;
use opencv::{calib3d, imgproc};
use serde::{Deserialize, Serialize};
use shakmaty::Square;

/// A point in image pixels.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Px {
    /// Column, pixels from the left.
    pub x: f64,
    /// Row, pixels from the top.
    pub y: f64,
}

/// The edge of the image White sits at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum WhiteEdge {
    /// White's pieces start at the bottom of the image.
    Bottom,
    /// At the top.
    Top,
    /// At the left.
    Left,
    /// At the right.
    Right,
}

impl WhiteEdge {
    /// The playing area's corners as a8, h8, h1, a1, from its corners in image order
    /// (top-left, top-right, bottom-right, bottom-left) with White at this edge.
    pub fn corners_from_image_order(self, tl_tr_br_bl: [Px; 4]) -> [Px; 4] {
        let shift = match self {
            WhiteEdge::Bottom => 0,
            WhiteEdge::Left => 1,
            WhiteEdge::Top => 2,
            WhiteEdge::Right => 3,
        };
        std::array::from_fn(|i| tl_tr_br_bl[(i + shift) % 4])
    }
}

/// A 3x3 projective transform of the plane, row-major.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Homography(pub [[f64; 3]; 3]);

impl Homography {
    /// The transform taking each `from[i]` to `to[i]` (four or more points; least squares).
    pub fn fit(from: &[(f64, f64)], to: &[(f64, f64)]) -> Result<Homography, BoardError> {
        Homography::find(from, to, 0, 3.0)
    }

    /// As [`Homography::fit`], but points that land further than `tolerance` (in `to`'s units)
    /// from where the best consensus puts them are left out (RANSAC).
    pub fn fit_robust(from: &[(f64, f64)], to: &[(f64, f64)], tolerance: f64) -> Result<Homography, BoardError> {
        Homography::find(from, to, calib3d::RANSAC, tolerance)
    }

    fn find(from: &[(f64, f64)], to: &[(f64, f64)], method: i32, tolerance: f64) -> Result<Homography, BoardError> {
        let pts = |p: &[(f64, f64)]| -> Vector<Point2f> { p.iter().map(|&(x, y)| Point2f::new(x as f32, y as f32)).collect() };
        let m = calib3d::find_homography(&pts(from), &pts(to), &mut Mat::default(), method, tolerance)?;
        if m.empty() {
            return Err(BoardError::Degenerate);
        }
        let mut h = [[0.0; 3]; 3];
        for (r, row) in h.iter_mut().enumerate() {
            for (c, v) in row.iter_mut().enumerate() {
                *v = *m.at_2d::<f64>(r as i32, c as i32)?;
            }
        }
        Ok(Homography(h))
    }

    /// Maps a point.
    pub fn apply(&self, (x, y): (f64, f64)) -> (f64, f64) {
        let h = &self.0;
        let w = h[2][0] * x + h[2][1] * y + h[2][2];
        ((h[0][0] * x + h[0][1] * y + h[0][2]) / w, (h[1][0] * x + h[1][1] * y + h[1][2]) / w)
    }

    /// The transform that undoes this one.
    pub fn inverse(&self) -> Homography {
        let m = &self.0;
        let cof = |r0: usize, r1: usize, c0: usize, c1: usize| m[r0][c0] * m[r1][c1] - m[r0][c1] * m[r1][c0];
        let inv = [
            [cof(1, 2, 1, 2), -cof(0, 2, 1, 2), cof(0, 1, 1, 2)],
            [-cof(1, 2, 0, 2), cof(0, 2, 0, 2), -cof(0, 1, 0, 2)],
            [cof(1, 2, 0, 1), -cof(0, 2, 0, 1), cof(0, 1, 0, 1)],
        ];
        Homography(inv)
    }

    /// `self` after `first`.
    pub fn after(&self, first: &Homography) -> Homography {
        let (a, b) = (&self.0, &first.0);
        Homography(std::array::from_fn(|r| std::array::from_fn(|c| (0..3).map(|k| a[r][k] * b[k][c]).sum())))
    }

    fn to_mat(self) -> Result<Mat, BoardError> {
        Ok(Mat::from_slice_2d(&self.0)?)
    }
}

/// The size of the warped, top-down board: `square` pixels a square, with `margin` pixels of
/// surroundings on each side (so a hand reaching in is seen before it covers a square).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layout {
    /// Pixels per square.
    pub square: u32,
    /// Pixels of margin outside the playing area, on each side.
    pub margin: u32,
}

impl Layout {
    /// Width and height of the warped image.
    pub fn side(&self) -> u32 {
        8 * self.square + 2 * self.margin
    }

    /// Board units (0..8 across the playing area, a8 corner at the origin) to warped pixels.
    fn units_to_pixels(&self) -> Homography {
        let (s, m) = (f64::from(self.square), f64::from(self.margin));
        Homography([[s, 0.0, m], [0.0, s, m], [0.0, 0.0, 1.0]])
    }

    /// The warped pixel rectangle of `sq`: (x, y, width, height).
    pub fn square_rect(&self, sq: Square) -> (u32, u32, u32, u32) {
        let col = u32::from(sq.file());
        let row = 7 - u32::from(sq.rank());
        (self.margin + col * self.square, self.margin + row * self.square, self.square, self.square)
    }
}

/// Where the board is in the camera image, and which way round.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// The video, camera or image it was made from.
    pub source: String,
    /// The frame it was made from.
    pub frame: u64,
    /// Width and height of the camera image in pixels.
    pub image_size: [u32; 2],
    /// The playing area's outer corners in the image: a8, h8, h1, a1.
    pub corners: [Px; 4],
    /// The edge of the image White sits at.
    pub white: WhiteEdge,
    /// Image pixels to board units: x from 0 (a-file edge) to 8 (h-file edge), y from 0 (rank 8
    /// edge) to 8 (rank 1 edge).
    pub homography: Homography,
    /// How the corners were found: `given` on the command line, or `auto`.
    pub found: Found,
}

/// How a calibration's corners were found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Found {
    /// Given by the user.
    Given,
    /// Found in the image by [`corners::find`].
    Auto,
}

/// What can go wrong locating the board.
#[derive(Debug, thiserror::Error)]
pub enum BoardError {
    /// OpenCV failed.
    #[error("OpenCV: {0}")]
    OpenCv(#[from] opencv::Error),
    /// The corners do not span a quadrilateral.
    #[error("the corners do not span a board (three of them are on one line)")]
    Degenerate,
    /// The calibration file could not be read or written.
    #[error("{path}: {message}")]
    File {
        /// The file.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// Frames of another shape than the calibration was made on: another camera, or the
    /// picture cropped.
    #[error(
        "the calibration was made on {}x{} frames (of {made_from}) and these are {}x{}, another shape: \
         run `touchmove calibrate` on this source",
        calibrated[0], calibrated[1], frames[0], frames[1]
    )]
    FrameSize {
        /// What the calibration was made from.
        made_from: String,
        /// Its frames' width and height.
        calibrated: [u32; 2],
        /// The frames' width and height now.
        frames: [u32; 2],
    },
}

impl Calibration {
    /// A calibration from the playing area's corners (a8, h8, h1, a1) in an image.
    pub fn from_corners(source: String, frame: u64, image_size: [u32; 2], corners: [Px; 4], white: WhiteEdge, found: Found) -> Result<Calibration, BoardError> {
        let image: Vec<(f64, f64)> = corners.iter().map(|p| (p.x, p.y)).collect();
        let units = [(0.0, 0.0), (8.0, 0.0), (8.0, 8.0), (0.0, 8.0)];
        let area = (0..4).map(|i| image[i].0 * image[(i + 1) % 4].1 - image[(i + 1) % 4].0 * image[i].1).sum::<f64>() / 2.0;
        if area.abs() < 64.0 {
            return Err(BoardError::Degenerate);
        }
        let homography = Homography::fit(&image, &units)?;
        Ok(Calibration { source, frame, image_size, corners, white, homography, found })
    }

    /// This calibration for frames of `size` (width, height) pixels: itself where it was made at
    /// that size; its corners scaled where the frames are the same picture at another resolution
    /// (the same shape within 1 %); [`BoardError::FrameSize`] where they are another shape.
    pub fn at_size(&self, size: [u32; 2]) -> Result<Calibration, BoardError> {
        if size == self.image_size {
            return Ok(self.clone());
        }
        let (sx, sy) = (f64::from(size[0]) / f64::from(self.image_size[0]), f64::from(size[1]) / f64::from(self.image_size[1]));
        let shape = sx / sy;
        if !(shape > 0.99 && shape < 1.01) {
            return Err(BoardError::FrameSize { made_from: self.source.clone(), calibrated: self.image_size, frames: size });
        }
        // Pixel centres: pixel i spans i - 0.5 to i + 0.5.
        let corners = self.corners.map(|p| Px { x: (p.x + 0.5) * sx - 0.5, y: (p.y + 0.5) * sy - 0.5 });
        Calibration::from_corners(self.source.clone(), self.frame, size, corners, self.white, self.found)
    }

    /// Reads a calibration file.
    pub fn load(path: &Path) -> Result<Calibration, BoardError> {
        let file = |message: String| BoardError::File { path: path.display().to_string(), message };
        let text = std::fs::read_to_string(path).map_err(|e| file(e.to_string()))?;
        serde_json::from_str(&text).map_err(|e| file(format!("not a calibration: {e}")))
    }

    /// Writes the calibration as pretty JSON, through a temporary file and a rename.
    pub fn save(&self, path: &Path) -> Result<(), BoardError> {
        let file = |message: String| BoardError::File { path: path.display().to_string(), message };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| file(e.to_string()))?;
        }
        let tmp = path.with_extension("json.tmp");
        let text = serde_json::to_string_pretty(self).expect("a calibration always serialises") + "\n";
        std::fs::write(&tmp, text).map_err(|e| file(e.to_string()))?;
        std::fs::rename(&tmp, path).map_err(|e| file(e.to_string()))
    }

    /// Where the centre of `sq` is in the camera image.
    pub fn square_centre(&self, sq: Square) -> Px {
        let units = (f64::from(u8::from(sq.file())) + 0.5, 7.5 - f64::from(u8::from(sq.rank())));
        let (x, y) = self.homography.inverse().apply(units);
        Px { x, y }
    }

    /// Warps a camera frame to the canonical top-down board of `layout` (see [`Warper`], which
    /// keeps what this computes for the frames that follow).
    pub fn warp(&self, frame: &Mat, layout: Layout) -> Result<Mat, BoardError> {
        Warper::new(self, layout, frame.size()?)?.warp(frame)
    }

    /// A small warp of `frame` for telling whether anything moved: `layout` sampled straight
    /// from the frame, without the averaging [`Calibration::warp`] does first, so it costs a
    /// fraction of a full warp. Aliased, but the same pixels are sampled every frame.
    pub fn glance(&self, frame: &Mat, layout: Layout) -> Result<Mat, BoardError> {
        warp_into(frame, layout.units_to_pixels().after(&self.homography), layout)
    }
}

/// The mean length, in pixels, of the sides of the quadrilateral `c`.
pub(crate) fn mean_side(c: &[Px; 4]) -> f64 {
    (0..4).map(|i| (c[i].x - c[(i + 1) % 4].x).hypot(c[i].y - c[(i + 1) % 4].y)).sum::<f64>() / 4.0
}

/// The grey the warp fades to where the frame has no picture: the middle of the model's input
/// range (the network subtracts 110 itself).
const NO_PICTURE: f64 = 110.0;

/// A calibration's warp of frames of one size onto one [`Layout`], prepared once.
///
/// A frame in which the board is much larger than the warp is first shrunk by area averaging
/// (as the model's training data was), so the bilinear warp does not alias. Where the warp
/// reaches outside the frame (a recording already cut to the playing area, a board at the
/// image's edge), its pixels there are faded to a flat grey: replicated edge pixels for a
/// quarter square, then a fade to grey over the next quarter. Replicating the edge all the way
/// fills the margin with streaks across it, which look like arms reaching in; a hard grey border
/// right at the edge would cut off the pieces leaning over it.
pub struct Warper {
    size: Size,
    /// The area-averaging shrink applied first, if any.
    shrink: Option<f64>,
    /// For each warped pixel, where it lies in the image (after the shrink), in OpenCV's
    /// fixed-point form: computed once, so a frame's warp is only the bilinear lookups.
    map: Remap,
    /// Where the warp lies outside the frame.
    fade: Option<Fade>,
}

/// The two maps `imgproc::remap` takes in fixed point: whole pixels (`CV_16SC2`) and the
/// interpolation table's index of the fraction (`CV_16UC1`).
struct Remap {
    whole: Mat,
    fraction: Mat,
}

impl Remap {
    /// The map of `to_warp` (image pixels to warped pixels) onto `layout`.
    fn new(to_warp: Homography, layout: Layout) -> Result<Remap, BoardError> {
        let side = layout.side() as i32;
        let to_image = to_warp.inverse();
        let mut exact = Mat::new_rows_cols_with_default(side, side, opencv::core::CV_32FC2, Scalar::all(0.0))?;
        for y in 0..side {
            let row = exact.at_row_mut::<opencv::core::Vec2f>(y)?;
            for (x, cell) in row.iter_mut().enumerate() {
                let (u, v) = to_image.apply((x as f64, f64::from(y)));
                *cell = opencv::core::Vec2f::from([u as f32, v as f32]);
            }
        }
        let (mut whole, mut fraction) = (Mat::default(), Mat::default());
        imgproc::convert_maps(&exact, &opencv::core::no_array(), &mut whole, &mut fraction, opencv::core::CV_16SC2, false)?;
        Ok(Remap { whole, fraction })
    }

    /// `frame` looked up bilinearly through the map, edge pixels repeated outside it.
    fn apply(&self, frame: &Mat) -> Result<Mat, BoardError> {
        let mut out = Mat::default();
        imgproc::remap(frame, &mut out, &self.whole, &self.fraction, imgproc::INTER_LINEAR, opencv::core::BORDER_REPLICATE, Scalar::default())?;
        Ok(out)
    }
}

/// The blend of a warp with grey where it lies outside the frame.
struct Fade {
    /// The picture's weight per warped pixel (`CV_32F`).
    picture: Mat,
    /// The grey's (1 - `picture`).
    grey: Mat,
}

impl Warper {
    /// The warp of `calibration` onto `layout`, for frames of `size`.
    pub fn new(calibration: &Calibration, layout: Layout, size: Size) -> Result<Warper, BoardError> {
        let scale = 1.5 * f64::from(8 * layout.square) / mean_side(&calibration.corners);
        let (shrink, to_board, shrunk) = if scale < 1.0 {
            let unscale = Homography([[1.0 / scale, 0.0, 0.0], [0.0, 1.0 / scale, 0.0], [0.0, 0.0, 1.0]]);
            // as imgproc::resize rounds the size
            let shrunk = Size::new((f64::from(size.width) * scale).round() as i32, (f64::from(size.height) * scale).round() as i32);
            (Some(scale), calibration.homography.after(&unscale), shrunk)
        } else {
            (None, calibration.homography, size)
        };
        let to_warp = layout.units_to_pixels().after(&to_board);
        let fade = fade_weights(shrunk, to_warp, layout)?;
        Ok(Warper { size, shrink, map: Remap::new(to_warp, layout)?, fade })
    }

    /// The frame size it was prepared for.
    pub fn frame_size(&self) -> Size {
        self.size
    }

    /// Warps `frame` (of [`Warper::frame_size`]).
    pub fn warp(&self, frame: &Mat) -> Result<Mat, BoardError> {
        let mut small = Mat::default();
        let frame = match self.shrink {
            Some(scale) => {
                imgproc::resize(frame, &mut small, Size::default(), scale, scale, imgproc::INTER_AREA)?;
                &small
            }
            None => frame,
        };
        let warped = self.map.apply(frame)?;
        let Some(fade) = &self.fade else { return Ok(warped) };
        let flat = Mat::new_size_with_default(warped.size()?, warped.typ(), Scalar::all(NO_PICTURE))?;
        let mut out = Mat::default();
        imgproc::blend_linear(&warped, &flat, &fade.picture, &fade.grey, &mut out)?;
        Ok(out)
    }
}

/// The fade of a warp through `to_warp` of frames of `size`, or `None` when the whole warp lies
/// inside the frame.
fn fade_weights(size: Size, to_warp: Homography, layout: Layout) -> Result<Option<Fade>, BoardError> {
    let to_image = to_warp.inverse();
    let side = f64::from(layout.side());
    let (w, h) = (f64::from(size.width), f64::from(size.height));
    let inside = |(x, y): (f64, f64)| (0.0..=w).contains(&x) && (0.0..=h).contains(&y);
    // The warp is a convex quadrilateral in the frame: inside if its corners are.
    if [(0.0, 0.0), (side, 0.0), (side, side), (0.0, side)].into_iter().all(|p| inside(to_image.apply(p))) {
        return Ok(None);
    }
    let picture = Mat::new_size_with_default(size, opencv::core::CV_8UC1, Scalar::all(255.0))?;
    let mut seen = Mat::default();
    let s = layout.side() as i32;
    imgproc::warp_perspective(&picture, &mut seen, &to_warp.to_mat()?, Size::new(s, s), imgproc::INTER_NEAREST, opencv::core::BORDER_CONSTANT, Scalar::all(0.0))?;
    let mut unseen = Mat::default();
    opencv::core::bitwise_not_def(&seen, &mut unseen)?;
    // The distance from each pixel without picture to the nearest with one, in quarter squares
    // past the first: the grey's weight, clipped to 0..1.
    let mut distance = Mat::default();
    imgproc::distance_transform_def(&unseen, &mut distance, imgproc::DIST_L2, imgproc::DIST_MASK_PRECISE)?;
    let quarter = f64::from(layout.square) / 4.0;
    let (mut ramp, mut clipped, mut grey, mut picture) = (Mat::default(), Mat::default(), Mat::default(), Mat::default());
    distance.convert_to(&mut ramp, opencv::core::CV_32F, 1.0 / quarter, -1.0)?;
    imgproc::threshold(&ramp, &mut clipped, 1.0, 1.0, imgproc::THRESH_TRUNC)?;
    imgproc::threshold(&clipped, &mut grey, 0.0, 0.0, imgproc::THRESH_TOZERO)?;
    grey.convert_to(&mut picture, opencv::core::CV_32F, -1.0, 1.0)?;
    Ok(Some(Fade { picture, grey }))
}

/// `frame` warped bilinearly through `to_warp` (image pixels to warped pixels) onto `layout`.
fn warp_into(frame: &Mat, to_warp: Homography, layout: Layout) -> Result<Mat, BoardError> {
    let mut out = Mat::default();
    let side = layout.side() as i32;
    imgproc::warp_perspective(frame, &mut out, &to_warp.to_mat()?, Size::new(side, side), imgproc::INTER_LINEAR, opencv::core::BORDER_REPLICATE, Scalar::default())?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn px(x: f64, y: f64) -> Px {
        Px { x, y }
    }

    #[test]
    fn a_calibration_follows_the_picture_to_another_resolution_but_not_another_shape() {
        let corners = [px(167.0, 172.0), px(390.0, 111.0), px(491.0, 326.0), px(226.0, 419.0)];
        let vga = Calibration::from_corners("cam".into(), 0, [640, 480], corners, WhiteEdge::Bottom, Found::Auto).unwrap();
        assert_eq!(vga.at_size([640, 480]).unwrap(), vga);
        let double = vga.at_size([1280, 960]).unwrap();
        assert_eq!(double.image_size, [1280, 960]);
        // The same square centre, twice as far from the image's corner (pixel centres).
        let (a, b) = (vga.square_centre(Square::E4), double.square_centre(Square::E4));
        assert!(((a.x + 0.5) * 2.0 - 0.5 - b.x).abs() < 1e-6 && ((a.y + 0.5) * 2.0 - 0.5 - b.y).abs() < 1e-6, "{a:?} {b:?}");
        let wide = vga.at_size([1280, 720]).unwrap_err();
        assert!(matches!(wide, BoardError::FrameSize { calibrated: [640, 480], frames: [1280, 720], .. }), "{wide}");
        assert!(wide.to_string().contains("640x480") && wide.to_string().contains("1280x720"), "{wide}");
    }

    #[test]
    fn white_edge_names_the_corners() {
        let [tl, tr, br, bl] = [px(0.0, 0.0), px(1.0, 0.0), px(1.0, 1.0), px(0.0, 1.0)];
        assert_eq!(WhiteEdge::Bottom.corners_from_image_order([tl, tr, br, bl]), [tl, tr, br, bl]);
        // White on the left: a1 is top-left, a8 top-right.
        assert_eq!(WhiteEdge::Left.corners_from_image_order([tl, tr, br, bl]), [tr, br, bl, tl]);
        assert_eq!(WhiteEdge::Top.corners_from_image_order([tl, tr, br, bl]), [br, bl, tl, tr]);
        assert_eq!(WhiteEdge::Right.corners_from_image_order([tl, tr, br, bl]), [bl, tl, tr, br]);
    }

    #[test]
    fn square_centres_follow_the_corners() {
        // White at the top of the image: a1 top-right, h8 bottom-left.
        let corners = WhiteEdge::Top.corners_from_image_order([px(100.0, 100.0), px(900.0, 100.0), px(900.0, 900.0), px(100.0, 900.0)]);
        let cal = Calibration::from_corners("test".into(), 0, [1000, 1000], corners, WhiteEdge::Top, Found::Given).unwrap();
        let a1 = cal.square_centre(Square::A1);
        assert!((a1.x - 850.0).abs() < 1e-6 && (a1.y - 150.0).abs() < 1e-6, "{a1:?}");
        let h8 = cal.square_centre(Square::H8);
        assert!((h8.x - 150.0).abs() < 1e-6 && (h8.y - 850.0).abs() < 1e-6, "{h8:?}");
        let inv = cal.homography.inverse().after(&cal.homography);
        let (x, y) = inv.apply((3.0, 4.0));
        assert!((x - 3.0).abs() < 1e-9 && (y - 4.0).abs() < 1e-9);
    }

    #[test]
    fn warp_puts_a8_top_left() {
        // A synthetic camera image: white background, the a8 square painted black, board
        // rotated with White on the right.
        let mut img = Mat::new_rows_cols_with_default(400, 400, opencv::core::CV_8UC1, Scalar::all(255.0)).unwrap();
        let corners = WhiteEdge::Right.corners_from_image_order([px(0.0, 0.0), px(400.0, 0.0), px(400.0, 400.0), px(0.0, 400.0)]);
        let cal = Calibration::from_corners("test".into(), 0, [400, 400], corners, WhiteEdge::Right, Found::Given).unwrap();
        let a8 = cal.square_centre(Square::A8);
        imgproc::circle(&mut img, opencv::core::Point::new(a8.x as i32, a8.y as i32), 15, Scalar::all(0.0), -1, imgproc::LINE_8, 0).unwrap();
        let layout = Layout { square: 16, margin: 8 };
        let warped = cal.warp(&img, layout).unwrap();
        let (x, y, w, h) = layout.square_rect(Square::A8);
        let centre = *warped.at_2d::<u8>((y + h / 2) as i32, (x + w / 2) as i32).unwrap();
        let (x, y, w, h) = layout.square_rect(Square::H1);
        let other = *warped.at_2d::<u8>((y + h / 2) as i32, (x + w / 2) as i32).unwrap();
        assert_eq!((centre, other), (0, 255));
    }

    #[test]
    fn the_prepared_warp_reads_the_same_pixels_as_a_perspective_warp() {
        // A noisy frame, so any difference in where or how a pixel is sampled shows.
        let mut frame = Mat::new_rows_cols_with_default(720, 1280, opencv::core::CV_8UC3, Scalar::all(0.0)).unwrap();
        opencv::core::randu(&mut frame, &Scalar::all(0.0), &Scalar::all(256.0)).unwrap();
        let corners = [px(402.5, 101.25), px(911.0, 140.0), px(1010.75, 650.5), px(330.0, 610.0)];
        let cal = Calibration::from_corners("test".into(), 0, [1280, 720], corners, WhiteEdge::Bottom, Found::Given).unwrap();
        let layout = Layout { square: 48, margin: 24 };
        let warped = Warper::new(&cal, layout, frame.size().unwrap()).unwrap().warp(&frame).unwrap();
        let direct = warp_into(&frame, layout.units_to_pixels().after(&cal.homography), layout).unwrap();
        let mut diff = Mat::default();
        opencv::core::absdiff(&warped, &direct, &mut diff).unwrap();
        let mut largest = 0.0;
        opencv::core::min_max_loc(&diff.reshape(1, 0).unwrap(), None, Some(&mut largest), None, None, &opencv::core::no_array()).unwrap();
        // Both sample at 1/32 pixel; a coordinate rounded the other way at a boundary moves a
        // noise pixel by at most 255/32 grey levels, and that is rare.
        let differing = opencv::core::count_non_zero(&diff.reshape(1, 0).unwrap()).unwrap();
        let values = 432 * 432 * 3;
        assert!(largest <= 8.0 && differing * 500 <= values, "{differing} of {values} values differ, by up to {largest}");
    }

    #[test]
    fn a_warp_past_the_frame_fades_to_grey_and_one_inside_is_untouched() {
        // A frame that is the playing area and nothing else, a uniform 200 grey.
        let layout = Layout { square: 48, margin: 24 };
        let frame = Mat::new_rows_cols_with_default(384, 384, opencv::core::CV_8UC3, Scalar::all(200.0)).unwrap();
        let edges = WhiteEdge::Bottom.corners_from_image_order([px(0.0, 0.0), px(384.0, 0.0), px(384.0, 384.0), px(0.0, 384.0)]);
        let cal = Calibration::from_corners("test".into(), 0, [384, 384], edges, WhiteEdge::Bottom, Found::Given).unwrap();
        let warped = cal.warp(&frame, layout).unwrap();
        let at = |m: &Mat, x: i32, y: i32| m.at_2d::<opencv::core::Vec3b>(y, x).unwrap()[0];
        // Inside, and a few pixels out (replicated), the picture; half a square out, grey;
        // between, a blend.
        assert_eq!((at(&warped, 216, 216), at(&warped, 216, 20), at(&warped, 20, 216)), (200, 200, 200));
        assert_eq!((at(&warped, 0, 216), at(&warped, 216, 431), at(&warped, 0, 0)), (110, 110, 110));
        let half = at(&warped, 216, 6);
        assert!(half > 130 && half < 180, "{half}");
        // The same board in a larger frame, with surroundings of 50: the margin shows them.
        let mut wide = Mat::new_rows_cols_with_default(484, 484, opencv::core::CV_8UC3, Scalar::all(50.0)).unwrap();
        Mat::roi_mut(&mut wide, opencv::core::Rect::new(50, 50, 384, 384)).unwrap().set_to_def(&Scalar::all(200.0)).unwrap();
        let edges = WhiteEdge::Bottom.corners_from_image_order([px(50.0, 50.0), px(434.0, 50.0), px(434.0, 434.0), px(50.0, 434.0)]);
        let cal = Calibration::from_corners("test".into(), 0, [484, 484], edges, WhiteEdge::Bottom, Found::Given).unwrap();
        let warped = cal.warp(&wide, layout).unwrap();
        assert_eq!((at(&warped, 216, 216), at(&warped, 0, 216), at(&warped, 0, 0)), (200, 50, 50));
    }
}
