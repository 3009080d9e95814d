//! The detect stage: fits the calibration to the frames' size, glances at each frame through a
//! small warp to skip the model where nothing moved, warps in full the frames the model, the
//! overlay or the evidence need, watches for the board or camera moving, and runs the model.

use crossbeam_channel::{Receiver, Sender};
use opencv::core::Mat;
use opencv::prelude::*;

use super::{Analysed, Config, EVIDENCE_FPS, PipelineError};
use crate::board::drift::{Drift, Watch};
use crate::board::{Calibration, Found, Layout, Warper};
use crate::capture::Frame;
use crate::detect::{Model, Reading};
use crate::gate::Gate;

/// Media seconds between checks that the board has not moved.
const DRIFT_EVERY_S: f64 = 5.0;
/// A hand-map cell above this means a hand is over the board (no drift check then).
const HAND_SEEN: f32 = 0.5;
/// The small warp the gate looks at: 8 pixels a square.
const GLANCE: Layout = Layout { square: 8, margin: 4 };

pub(super) struct Detector {
    calibration: Calibration,
    /// The calibration's full warp for the frames' size (made at the first frame, and again
    /// after a re-calibration).
    warper: Option<Warper>,
    model: Model,
    layout: Layout,
    gate: Option<Gate>,
    /// Every frame is warped in full (for the overlay), not only those the model or the
    /// evidence needs.
    every_warp: bool,
    /// The time of the last frame warped in full.
    last_kept: f64,
    watch: Option<Watch>,
    last_check: f64,
    lost_warned: bool,
    /// The last reading showed no hand over the board.
    quiet: bool,
}

impl Detector {
    pub(super) fn new(config: &Config) -> Result<Detector, PipelineError> {
        let model = Model::load(&config.model, config.threads)?;
        let layout = model.layout();
        Ok(Detector {
            calibration: config.calibration.clone(),
            warper: None,
            model,
            layout,
            // A change of 12 grey levels in a half-square cell; at least one frame in 30 runs.
            gate: config.gate.then(|| Gate::new(12.0, 30)),
            every_warp: config.overlay,
            last_kept: f64::NEG_INFINITY,
            watch: None,
            last_check: f64::NEG_INFINITY,
            lost_warned: false,
            quiet: false,
        })
    }

    /// Runs until the frames end or the next stage hangs up. A frame the gate skipped is passed
    /// on when the next one comes; the last frame of the input is read whatever the gate says,
    /// so the board is seen as the footage leaves it (a hand that went slowly may never have
    /// changed a frame enough, and nothing comes after to show it gone).
    pub(super) fn run(mut self, frames: Receiver<Frame>, out: Sender<Analysed>) -> Result<(), PipelineError> {
        let mut skipped: Option<(Frame, Analysed)> = None;
        for frame in frames.iter() {
            if let Some((_, analysed)) = skipped.take()
                && out.send(analysed).is_err()
            {
                return Ok(());
            }
            let warning = match self.fit_size(&frame)? {
                Some(warning) => Some(warning),
                None => self.check_drift(&frame)?,
            };
            let admit = match &mut self.gate {
                Some(gate) => gate.admit(&self.calibration.glance(&frame.image, GLANCE)?)? || warning.is_some(),
                None => true,
            };
            // The full warp only where it is used: the model, the overlay, the evidence.
            let keep = admit || self.every_warp || frame.t - self.last_kept >= 1.0 / EVIDENCE_FPS;
            let warped = if keep {
                self.last_kept = frame.t;
                Some(self.warp(&frame.image)?)
            } else {
                None
            };
            // One frame at a time: batches were no faster on two cores and held four times the
            // model's working memory.
            let reading = match (&warped, admit) {
                (Some(warped), true) => Some(self.model.read(warped, frame.index, frame.t)?),
                _ => None,
            };
            if let Some(r) = &reading {
                self.quiet = !hands_seen(r);
            }
            if self.quiet && self.watch.is_none() {
                // The first quiet frame is the drift check's reference.
                self.watch = Some(Watch::new(self.calibration.clone(), &frame.image)?);
                self.last_check = frame.t;
            }
            let analysed = Analysed { index: frame.index, t: frame.t, at: frame.at, warped, reading, warning };
            if analysed.reading.is_none() {
                skipped = Some((frame, analysed));
            } else if out.send(analysed).is_err() {
                return Ok(());
            }
        }
        if let Some((frame, mut analysed)) = skipped {
            let warped = match analysed.warped.take() {
                Some(warped) => warped,
                None => self.warp(&frame.image)?,
            };
            analysed.reading = Some(self.model.read(&warped, frame.index, frame.t)?);
            analysed.warped = Some(warped);
            let _ = out.send(analysed);
        }
        Ok(())
    }

    /// The full warp of `image`, through the warper prepared for its size.
    fn warp(&mut self, image: &Mat) -> Result<Mat, PipelineError> {
        let size = image.size()?;
        let warper = match self.warper.take() {
            Some(w) if w.frame_size() == size => w,
            _ => Warper::new(&self.calibration, self.layout, size)?,
        };
        Ok(self.warper.insert(warper).warp(image)?)
    }

    /// Makes the calibration fit the frames' size when it changes (the first frame of a source
    /// of another resolution, a camera that came back at another): the corners scaled, with a
    /// warning to record; an error when the frames are another shape.
    fn fit_size(&mut self, frame: &Frame) -> Result<Option<String>, PipelineError> {
        let size = frame.image.size()?;
        let size = [size.width, size.height].map(|v| u32::try_from(v).unwrap_or(0));
        if size == self.calibration.image_size {
            return Ok(None);
        }
        let was = self.calibration.image_size;
        self.calibration = self.calibration.at_size(size)?;
        self.warper = None;
        // The drift check's reference was taken on frames of the other size.
        self.watch = None;
        Ok(Some(format!(
            "frame {}: the frames are {}x{} and the calibration was made on {}x{}: its corners scaled to them",
            frame.index, size[0], size[1], was[0], was[1]
        )))
    }

    /// Every few seconds, while no hand is over the board, checks the grid is where the
    /// calibration says; re-calibrates when it moved. Returns a warning to record.
    fn check_drift(&mut self, frame: &Frame) -> Result<Option<String>, PipelineError> {
        let Some(watch) = &self.watch else { return Ok(None) };
        if !self.quiet || frame.t - self.last_check < DRIFT_EVERY_S {
            return Ok(None);
        }
        self.last_check = frame.t;
        match watch.check(&frame.image)? {
            Drift::Still => {
                self.lost_warned = false;
                Ok(None)
            }
            Drift::Moved(corners) => {
                let old = &self.calibration;
                self.calibration = Calibration::from_corners(old.source.clone(), frame.index, old.image_size, corners, old.white, Found::Auto)?;
                self.warper = None;
                self.watch = Some(Watch::new(self.calibration.clone(), &frame.image)?);
                Ok(Some(format!("the board moved in the image at frame {}: re-calibrated", frame.index)))
            }
            Drift::Lost if !self.lost_warned => {
                self.lost_warned = true;
                Ok(Some(format!("the board's grid is not seen where it was calibrated (frame {}): hands over it, or the camera moved", frame.index)))
            }
            Drift::Lost => Ok(None),
        }
    }
}

fn hands_seen(reading: &Reading) -> bool {
    reading.hands.white.iter().chain(&reading.hands.black).any(|&p| p > HAND_SEEN)
}
