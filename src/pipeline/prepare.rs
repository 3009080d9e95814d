//! The prepare stage: fits the calibration to the frames' size, glances at each frame through a
//! small warp to skip the model where nothing moved, warps in full the frames the model, the
//! overlay or the evidence need, and watches for the board or camera moving. It runs in its own
//! thread, so warping one frame overlaps the model reading the one before.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Instant;

use crossbeam_channel::{Receiver, Sender};
use opencv::core::Mat;
use opencv::prelude::*;

use super::{Config, EVIDENCE_FPS, PipelineError};
use crate::board::drift::{Drift, Watch};
use crate::board::{Calibration, Found, Layout, Px, Warper};
use crate::capture::{Frame, Source};
use crate::gate::Gate;

/// Media seconds between checks that the board has not moved.
const DRIFT_EVERY_S: f64 = 5.0;
/// The small warp the gate looks at: 8 pixels a square.
const GLANCE: Layout = Layout { square: 8, margin: 4 };

/// What the model's stage last saw of the hands: whether its latest reading showed none over
/// the playing area, and of which frame, so the prepare stage, which may run many frames ahead
/// of the model, trusts it only for the frame it last sent to be read. Offline the prepare
/// stage waits for that reading, so what it decides (a drift check's frame) depends on the
/// footage alone, never on which thread ran ahead; live it does not wait.
#[derive(Debug, Default)]
pub(super) struct Quiet {
    state: Mutex<Seen>,
    changed: Condvar,
}

/// The last frame the model read, and whether it showed a hand; whether the model's stage ended.
#[derive(Debug, Default)]
struct Seen {
    read: Option<(u64, bool)>,
    ended: bool,
}

impl Quiet {
    /// The model read frame `index`, and saw a hand over the playing area or not.
    pub(super) fn read(&self, index: u64, hands: bool) {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner).read = Some((index, hands));
        self.changed.notify_all();
    }

    /// The model's stage reads no more frames.
    pub(super) fn end(&self) {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner).ended = true;
        self.changed.notify_all();
    }

    /// Whether the model has read frame `index` and saw no hand over the playing area; with
    /// `wait`, once it has read that frame (or stopped reading).
    fn at(&self, index: u64, wait: bool) -> bool {
        let mut seen = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        while wait && !seen.ended && seen.read.is_none_or(|(i, _)| i < index) {
            seen = self.changed.wait(seen).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        seen.read == Some((index, false))
    }
}

/// What a frame comes to the model's stage as.
pub(super) struct Prepared {
    pub(super) index: u64,
    pub(super) t: f64,
    pub(super) at: Instant,
    pub(super) view: View,
    /// Said about the board or camera at this frame (moved, lost, another size).
    pub(super) warning: Option<String>,
    /// The board moved and a set is in use: the frame, with the playing area's new corners
    /// (a8, h8, h1, a1), for the set to be learnt again.
    pub(super) relearn: Option<(Mat, [Px; 4])>,
}

/// The frame warped to the board, and whether the model is to read it.
pub(super) enum View {
    /// Something moved: the model reads it (and the overlay and the evidence may show it).
    Read(Mat),
    /// Nothing moved, but the overlay or the evidence shows it.
    Shown(Mat),
    /// Nothing moved and nothing shows it: not warped.
    Skipped,
}

impl View {
    /// The warped frame, where there is one.
    pub(super) fn into_mat(self) -> Option<Mat> {
        match self {
            View::Read(m) | View::Shown(m) => Some(m),
            View::Skipped => None,
        }
    }
}

pub(super) struct Preparer {
    calibration: Calibration,
    layout: Layout,
    /// The calibration's full warp for the frames' size (made at the first frame, and again
    /// after a re-calibration).
    warper: Option<Warper>,
    gate: Option<Gate>,
    /// Every frame is warped in full (for the overlay), not only those the model or the
    /// evidence needs.
    every_warp: bool,
    /// The time of the last frame warped in full.
    last_kept: f64,
    watch: Option<Watch>,
    last_check: f64,
    lost_warned: bool,
    /// The last frame sent to be read: the one the gate compares the next ones with.
    last_read: Option<u64>,
    /// Kept by the model's stage.
    quiet: Arc<Quiet>,
    /// A set correction is in use, to be learnt again when the board moves.
    with_set: bool,
    /// The frame and corners of the last re-calibration, until passed on.
    relearn: Option<(Mat, [Px; 4])>,
    /// Frames come from a live source: the model's readings are not waited for.
    live: bool,
    /// Live: set by the decide stage while a move leads that has not gone out; every frame is
    /// read then, so it goes out as soon as the readings allow, not at the gate's heartbeat.
    undecided: Option<Arc<AtomicBool>>,
}

impl Preparer {
    /// A stage preparing frames of `config`'s source for a model that reads warps of `layout`;
    /// `quiet` is kept by the model's stage.
    pub(super) fn new(config: &Config, layout: Layout, quiet: Arc<Quiet>, undecided: Option<Arc<AtomicBool>>) -> Preparer {
        Preparer {
            calibration: config.calibration.clone(),
            layout,
            warper: None,
            // A change of 12 grey levels in a half-square cell; at least one frame in 30 runs.
            // Photos are each read: one is taken because something happened, and a dark piece
            // moved between dark squares changes a half-square cell by less (render.illegal's
            // photos: 4 of 41 of one game went unread, and with them two of its moves' own
            // photos).
            gate: (config.gate && !matches!(config.source, Source::Stills(_))).then(|| Gate::new(12.0, 30)),
            every_warp: config.overlay,
            last_kept: f64::NEG_INFINITY,
            watch: None,
            last_check: f64::NEG_INFINITY,
            lost_warned: false,
            last_read: None,
            quiet,
            with_set: config.set.is_some(),
            relearn: None,
            live: config.live,
            undecided,
        }
    }

    /// Runs until the frames end or the next stage hangs up. A frame the gate skipped is passed
    /// on when the next one comes; the last frame of the input is read whatever the gate says,
    /// so the board is seen as the footage leaves it (a hand that went slowly may never have
    /// changed a frame enough, and nothing comes after to show it gone).
    pub(super) fn run(mut self, frames: Receiver<Frame>, out: Sender<Prepared>) -> Result<(), PipelineError> {
        let mut skipped: Option<(Frame, Prepared)> = None;
        for frame in frames.iter() {
            if let Some((_, prepared)) = skipped.take()
                && out.send(prepared).is_err()
            {
                return Ok(());
            }
            let mut warning = self.fit_size(&frame)?;
            // Without the gate, every frame is read.
            let moved = match &mut self.gate {
                Some(gate) => {
                    let wanted = self.undecided.as_ref().is_some_and(|u| u.load(Ordering::Relaxed));
                    Some(gate.admit(&self.calibration.glance(&frame.image, GLANCE)?, wanted)?)
                }
                None => None,
            };
            // The grid is checked where the gate saw nothing move since the model last read a
            // frame (a hand coming in would hide it), and that reading showed no hand.
            if warning.is_none() && moved != Some(true) {
                warning = self.check_drift(&frame)?;
            }
            let read = moved != Some(false) || warning.is_some();
            // The full warp only where it is used: the model, the overlay, the evidence.
            let view = if read {
                View::Read(self.warp(&frame)?)
            } else if self.every_warp || frame.t - self.last_kept >= 1.0 / EVIDENCE_FPS {
                View::Shown(self.warp(&frame)?)
            } else {
                View::Skipped
            };
            if self.watch.is_none() && moved != Some(true) && self.quiet() {
                // The first quiet frame (nothing moved since a reading that showed no hand) is
                // the drift check's reference.
                self.watch = Some(Watch::new(self.calibration.clone(), &frame.image)?);
                self.last_check = frame.t;
            }
            let prepared = Prepared { index: frame.index, t: frame.t, at: frame.at, view, warning, relearn: self.relearn.take() };
            if matches!(prepared.view, View::Read(_)) {
                self.last_read = Some(frame.index);
                if out.send(prepared).is_err() {
                    return Ok(());
                }
            } else {
                skipped = Some((frame, prepared));
            }
        }
        if let Some((frame, mut prepared)) = skipped {
            prepared.view = View::Read(match prepared.view.into_mat() {
                Some(warped) => warped,
                None => self.warp(&frame)?,
            });
            let _ = out.send(prepared);
        }
        Ok(())
    }

    /// Whether the model has read the last frame sent to it and saw no hand over the playing
    /// area: with the gate seeing nothing move since, the grid is in plain view.
    fn quiet(&self) -> bool {
        self.last_read.is_some_and(|i| self.quiet.at(i, !self.live))
    }

    /// The full warp of `frame`, through the warper prepared for its size.
    fn warp(&mut self, frame: &Frame) -> Result<Mat, PipelineError> {
        self.last_kept = frame.t;
        let size = frame.image.size()?;
        let warper = match self.warper.take() {
            Some(w) if w.frame_size() == size => w,
            _ => Warper::new(&self.calibration, self.layout, size)?,
        };
        Ok(self.warper.insert(warper).warp(&frame.image)?)
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
        if frame.t - self.last_check < DRIFT_EVERY_S || !self.quiet() {
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
                if self.with_set {
                    self.relearn = Some((frame.image.clone(), self.calibration.corners));
                }
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
