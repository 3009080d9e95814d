//! Which frames are worth running the board model on: a cheap difference between a small grey
//! thumbnail of the warped board and the thumbnail of the last frame that was run, so a quiet
//! board costs almost nothing; a heartbeat still runs the model now and then.

use opencv::core::{Mat, Size};
use opencv::imgproc;

use crate::board::BoardError;

/// Thumbnail side in cells: each cell averages a patch about half a square wide.
const CELLS: i32 = 20;

/// Decides frame by frame whether anything moved since the model last ran.
#[derive(Debug)]
pub struct Gate {
    last: Option<Mat>,
    threshold: f64,
    heartbeat: u32,
    since_run: u32,
}

impl Gate {
    /// A gate that admits a frame when some thumbnail cell changed by more than `threshold`
    /// grey levels (0-255), and at least every `heartbeat` frames.
    pub fn new(threshold: f64, heartbeat: u32) -> Gate {
        Gate { last: None, threshold, heartbeat: heartbeat.max(1), since_run: 0 }
    }

    /// Whether to run the model on `board` (the warped board, BGR or grey); always where
    /// `wanted` (a reading is waited for).
    pub fn admit(&mut self, board: &Mat, wanted: bool) -> Result<bool, BoardError> {
        let thumb = thumbnail(board)?;
        let changed = match &self.last {
            None => true,
            Some(last) => largest_change(last, &thumb)? > self.threshold,
        };
        self.since_run += 1;
        if wanted || changed || self.since_run >= self.heartbeat {
            self.last = Some(thumb);
            self.since_run = 0;
            return Ok(true);
        }
        Ok(false)
    }
}

fn thumbnail(image: &Mat) -> Result<Mat, BoardError> {
    let grey = crate::board::corners::grey(image)?;
    let mut small = Mat::default();
    imgproc::resize(&grey, &mut small, Size::new(CELLS, CELLS), 0.0, 0.0, imgproc::INTER_AREA)?;
    Ok(small)
}

fn largest_change(a: &Mat, b: &Mat) -> Result<f64, BoardError> {
    let mut diff = Mat::default();
    opencv::core::absdiff(a, b, &mut diff)?;
    let mut max = 0.0;
    opencv::core::min_max_loc(&diff, None, Some(&mut max), None, None, &opencv::core::no_array())?;
    Ok(max)
}

#[cfg(test)]
mod tests {
    use opencv::core::{Point, Scalar};
    use opencv::prelude::*;

    use super::*;

    fn noisy_board(seed: u64) -> Mat {
        let mut img = Mat::new_rows_cols_with_default(400, 400, opencv::core::CV_8UC1, Scalar::all(0.0)).unwrap();
        let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
        for y in 0..400 {
            for x in 0..400 {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let square = if ((x / 50) + (y / 50)) % 2 == 0 { 200 } else { 60 };
                let noise = (state >> 60) as i32 - 8;
                *img.at_2d_mut::<u8>(y, x).unwrap() = (square + noise).clamp(0, 255) as u8;
            }
        }
        img
    }

    #[test]
    fn a_quiet_board_is_skipped_and_a_hand_is_not() {
        let mut gate = Gate::new(10.0, 30);
        assert!(gate.admit(&noisy_board(1), false).unwrap(), "the first frame runs");
        let skipped = (2..12).filter(|&s| !gate.admit(&noisy_board(s), false).unwrap()).count();
        assert_eq!(skipped, 10, "sensor noise alone does not run the model");
        let mut hand = noisy_board(12);
        imgproc::circle(&mut hand, Point::new(30, 370), 25, Scalar::all(140.0), -1, imgproc::LINE_8, 0).unwrap();
        assert!(gate.admit(&hand, false).unwrap(), "a fingertip at the edge runs the model");
    }

    #[test]
    fn the_heartbeat_runs_the_model_on_a_still_board() {
        let mut gate = Gate::new(10.0, 5);
        let runs = (0..20).filter(|&s| gate.admit(&noisy_board(s), false).unwrap()).count();
        assert_eq!(runs, 4, "frames 0, 5, 10 and 15");
    }
}
