//! The detect stage: runs the board model on the frames the prepare stage warped for it, and
//! tells that stage whether the last reading showed a hand over the playing area.

use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender};

use super::prepare::{Prepared, Quiet, View};
use super::{Analysed, PipelineError};
use crate::detect::{Model, Reading};

/// A hand-map cell over the playing area above this means a hand is over the board, hiding
/// some of the grid (no drift check then). Hands in the margin hide none of it.
const HAND_SEEN: f32 = 0.5;

/// Runs `model` on every frame prepared to be read, until the frames end or the next stage hangs
/// up; `quiet` tells after each reading whether it showed no hand over the playing area. One
/// frame at a time: batches were no faster on two cores and held four times the model's
/// working memory.
pub(super) fn run(mut model: Model, quiet: Arc<Quiet>, frames: Receiver<Prepared>, out: Sender<Analysed>) -> Result<(), PipelineError> {
    for p in frames.iter() {
        let (warped, reading) = match p.view {
            View::Read(warped) => {
                let reading = model.read(&warped, p.index, p.t)?;
                quiet.read(p.index, hands_seen(&reading));
                (Some(warped), Some(reading))
            }
            View::Shown(warped) => (Some(warped), None),
            View::Skipped => (None, None),
        };
        if out.send(Analysed { index: p.index, t: p.t, at: p.at, warped, reading, warning: p.warning }).is_err() {
            return Ok(());
        }
    }
    Ok(())
}

fn hands_seen(reading: &Reading) -> bool {
    let map = &reading.hands;
    let over = |i: usize| map.square_at(i / map.side, i % map.side).is_some();
    map.white.iter().zip(&map.black).enumerate().any(|(i, (&w, &b))| w.max(b) > HAND_SEEN && over(i))
}
