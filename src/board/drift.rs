//! Has the board moved since it was calibrated (the camera bumped, the board pushed)? The grid's
//! X-junctions are measured where the calibration puts them; when they fade, the board is looked
//! for afresh, and a board found elsewhere is reported with its new corners.

use opencv::core::Mat;

use super::{BoardError, Calibration, Px, corners};

/// Below this share of the calibration-time contrast, the grid is looked for afresh.
const FADED: f64 = 0.6;

/// Corners further than this from the calibrated ones, in squares, mean the board moved.
const MOVED_SQUARES: f64 = 0.25;

/// What a check found.
#[derive(Clone, Debug, PartialEq)]
pub enum Drift {
    /// The grid is where the calibration says.
    Still,
    /// The board is elsewhere: its playing area's corners now, a8, h8, h1, a1 (White's edge kept).
    Moved([Px; 4]),
    /// The grid is not seen where it was, nor found elsewhere (hands, or the board out of view).
    Lost,
}

/// Watches one calibrated board.
#[derive(Clone, Debug)]
pub struct Watch {
    calibration: Calibration,
    reference: f64,
}

impl Watch {
    /// Starts watching, taking the grid's contrast in `frame` (no hands over the board) as the
    /// reference.
    pub fn new(calibration: Calibration, frame: &Mat) -> Result<Watch, BoardError> {
        let reference = contrast(&calibration, frame)?;
        Ok(Watch { calibration, reference })
    }

    /// Checks a frame with no hands over the board.
    pub fn check(&self, frame: &Mat) -> Result<Drift, BoardError> {
        if contrast(&self.calibration, frame)? >= FADED * self.reference {
            return Ok(Drift::Still);
        }
        let Some(order) = corners::find(frame)? else { return Ok(Drift::Lost) };
        let now = self.calibration.white.corners_from_image_order(order);
        let was = &self.calibration.corners;
        let side = super::mean_side(was) / 8.0;
        let shift = now.iter().zip(was).map(|(a, b)| (a.x - b.x).hypot(a.y - b.y)).fold(0.0, f64::max) / side;
        Ok(if shift > MOVED_SQUARES { Drift::Moved(now) } else { Drift::Still })
    }
}

fn contrast(calibration: &Calibration, frame: &Mat) -> Result<f64, BoardError> {
    corners::junctions(&corners::grey(frame)?, &calibration.homography.inverse())
}

#[cfg(test)]
mod tests {
    use opencv::core::{Rect, Scalar, Size};
    use opencv::imgproc;
    use opencv::prelude::*;

    use super::*;
    use crate::board::{Found, WhiteEdge};

    fn board_at(dx: i32) -> Mat {
        let mut img = Mat::new_rows_cols_with_default(420, 480, opencv::core::CV_8UC1, Scalar::all(128.0)).unwrap();
        for r in 0..8 {
            for c in 0..8 {
                let v = if (r + c) % 2 == 0 { 220.0 } else { 40.0 };
                imgproc::rectangle(&mut img, Rect::new(40 + dx + c * 40, 50 + r * 40, 40, 40), Scalar::all(v), -1, imgproc::LINE_8, 0).unwrap();
            }
        }
        img
    }

    #[test]
    fn a_pushed_board_is_found_where_it_went() {
        let still = board_at(0);
        let order = corners::find(&still).unwrap().unwrap();
        let corners = WhiteEdge::Bottom.corners_from_image_order(order);
        let cal = Calibration::from_corners("test".into(), 0, [480, 420], corners, WhiteEdge::Bottom, Found::Auto).unwrap();
        let watch = Watch::new(cal, &still).unwrap();
        assert_eq!(watch.check(&still).unwrap(), Drift::Still);
        let Drift::Moved(now) = watch.check(&board_at(30)).unwrap() else { panic!("the push is seen") };
        assert!((now[0].x - 70.0).abs() < 2.0 && (now[0].y - 50.0).abs() < 2.0, "{now:?}");
        let blank = Mat::new_size_with_default(Size::new(480, 420), opencv::core::CV_8UC1, Scalar::all(128.0)).unwrap();
        assert_eq!(watch.check(&blank).unwrap(), Drift::Lost);
    }
}
