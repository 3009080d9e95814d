//! The detect stage: runs the board model on the frames the prepare stage warped for it, and
//! tells that stage whether the last reading showed a hand over the playing area. Where the
//! board moved and a set is in use, it also reads the frame as a set is learnt from, and takes
//! the set learnt again (by the decide stage, which knows the position) when it comes back.

use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender};
use opencv::core::Mat;

use super::prepare::{Prepared, Quiet, View};
use super::{Analysed, PipelineError};
use crate::board::Px;
use crate::detect::{Look, Model, Reading, SetCorrection};
use crate::photo::reference;

/// A hand-map cell over the playing area above this means a hand is over the board, hiding
/// some of the grid (no drift check then). Hands in the margin hide none of it.
const HAND_SEEN: f32 = 0.5;

/// Runs `model` on every frame prepared to be read, until the frames end or the next stage hangs
/// up; `quiet` tells after each reading whether it showed no hand over the playing area, and
/// `sets` brings sets learnt again, used from the next frame on. One frame at a time: batches
/// were no faster on two cores and held four times the model's working memory.
pub(super) fn run(mut model: Model, quiet: Arc<Quiet>, frames: Receiver<Prepared>, sets: Receiver<SetCorrection>, out: Sender<Analysed>) -> Result<(), PipelineError> {
    // However this stage ends (the frames done, a failure, a panic), the prepare stage stops
    // waiting for its readings.
    let _ended = Ended(&quiet);
    for p in frames.iter() {
        if let Some(set) = sets.try_iter().last() {
            model.set_correction(Some(set))?;
        }
        let relook = p.relearn.and_then(|(image, corners)| relook(&mut model, &image, corners));
        let (warped, reading) = match p.view {
            View::Read(warped) => {
                let reading = model.read(&warped, p.index, p.t)?;
                quiet.read(p.index, hands_seen(&reading));
                (Some(warped), Some(reading))
            }
            View::Shown(warped) => (Some(warped), None),
            View::Skipped => (None, None),
        };
        if out.send(Analysed { index: p.index, t: p.t, at: p.at, warped, reading, warning: p.warning, relook }).is_err() {
            return Ok(());
        }
    }
    Ok(())
}

/// The reads a set is learnt from, of the board at `corners` in `image`; `None` (said) where
/// they cannot be made: the set in use is kept.
fn relook(model: &mut Model, image: &Mat, corners: [Px; 4]) -> Option<Vec<Look>> {
    match reference::looks(model, image, corners) {
        Ok(looks) => Some(looks),
        Err(e) => {
            tracing::warn!("the set is not learnt again after the board moved: {e}");
            None
        }
    }
}

/// Tells `Quiet` the model's stage ended, when dropped.
struct Ended<'a>(&'a Quiet);

impl Drop for Ended<'_> {
    fn drop(&mut self) {
        self.0.end();
    }
}

fn hands_seen(reading: &Reading) -> bool {
    let map = &reading.hands;
    let over = |i: usize| map.square_at(i / map.side, i % map.side).is_some();
    map.white.iter().zip(&map.black).enumerate().any(|(i, (&w, &b))| w.max(b) > HAND_SEEN && over(i))
}
