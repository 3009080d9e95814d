//! One PNG timeline per clip: the labels above, the predictions below, each as four lanes
//! (hands over the board, events, moves, rulings) on a shared time axis. Drawn with plotters'
//! bitmap backend; text uses DejaVu Sans Mono, committed in `assets/fonts` (its licence beside
//! it), so no system font library is needed.

use std::path::Path;
use std::sync::OnceLock;

use plotters::prelude::*;
use plotters::style::{FontStyle, register_font};

use super::labels::Labels;
use super::metrics::move_window;
use super::predicted::Predicted;
use super::{FramedEvent, Tolerances};

const FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSansMono.ttf");
const FAMILY: &str = "touchmove-mono";
const WIDTH: u32 = 1400;
const LEFT: i32 = 150;
const RIGHT: i32 = 20;
const TOP: i32 = 30;
const LANE: i32 = 46;
const GAP: i32 = 22;

fn font() -> Result<(), String> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    if *REGISTERED.get_or_init(|| register_font(FAMILY, FontStyle::Normal, FONT).is_ok()) {
        Ok(())
    } else {
        Err("the bundled font DejaVuSansMono.ttf cannot be read".into())
    }
}

/// Maps seconds to pixels.
struct Axis {
    duration: f64,
}

impl Axis {
    fn x(&self, t: f64) -> i32 {
        LEFT + ((t.clamp(0.0, self.duration) / self.duration) * f64::from(WIDTH as i32 - LEFT - RIGHT)) as i32
    }
}

/// Top pixel of lane `i` (0..4 labels, 4..8 predictions).
fn lane_top(i: i32) -> i32 {
    TOP + i * LANE + if i >= 4 { GAP } else { 0 }
}

/// Black text of `size` pixels in the bundled font.
fn text(size: i32) -> TextStyle<'static> {
    TextStyle::from((FAMILY, size).into_font()).color(&BLACK)
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// Draws the timeline of the clip `name` to `path`.
pub fn timeline(name: &str, labels: &Labels, predicted: &Predicted, tol: Tolerances, path: &Path) -> Result<(), String> {
    font()?;
    let at = |e: String| format!("{}: {e}", path.display());
    let height = (lane_top(8) + 30) as u32;
    let root = BitMapBackend::new(path, (WIDTH, height)).into_drawing_area();
    root.fill(&WHITE).map_err(err).map_err(at)?;
    let last_t = [
        predicted.track.last().map(|f| f.t),
        predicted.events.last().map(|e| e.event.t),
        predicted.rulings.iter().map(|r| r.t).reduce(f64::max),
        predicted.moves.iter().map(|m| m.t).reduce(f64::max),
    ]
    .into_iter()
    .flatten()
    .fold(labels.duration.unwrap_or(0.0), f64::max);
    let axis = Axis { duration: last_t.max(1.0) };
    let draw = |e: &dyn Fn() -> Result<(), String>| e().map_err(at);

    draw(&|| {
        root.draw(&Text::new(format!("{name}   (labels above, predictions below)"), (8, 8), text(14))).map_err(err)?;
        let names = ["hands", "events", "moves", "rulings"];
        for i in 0..8 {
            let top = lane_top(i);
            let shade = if i < 4 { RGBColor(240, 244, 250) } else { RGBColor(250, 244, 238) };
            root.draw(&Rectangle::new([(LEFT, top), (WIDTH as i32 - RIGHT, top + LANE - 4)], shade.filled())).map_err(err)?;
            let who = if i < 4 { "label" } else { "predicted" };
            root.draw(&Text::new(format!("{who} {}", names[(i % 4) as usize]), (6, top + 14), text(12))).map_err(err)?;
        }
        let bottom = lane_top(8);
        for s in 0..=axis.duration.floor() as i32 {
            let x = axis.x(f64::from(s));
            root.draw(&PathElement::new(vec![(x, bottom), (x, bottom + 5)], BLACK)).map_err(err)?;
            root.draw(&Text::new(format!("{s}s"), (x - 6, bottom + 8), text(10))).map_err(err)?;
        }
        Ok(())
    })?;

    // Hands over the board: a step line, 0 at the lane's bottom.
    let steps = |lane: i32, points: &[(f64, u32)]| -> Result<(), String> {
        let base = lane_top(lane) + LANE - 8;
        let y = |h: u32| base - (h.min(3) as i32) * (LANE - 12) / 3;
        let mut line = Vec::new();
        for (i, &(t, h)) in points.iter().enumerate() {
            if i > 0 {
                line.push((axis.x(t), y(points[i - 1].1)));
            }
            line.push((axis.x(t), y(h)));
        }
        if let Some(&(_, h)) = points.last() {
            line.push((axis.x(axis.duration), y(h)));
        }
        root.draw(&PathElement::new(line, BLUE.stroke_width(2))).map_err(err)
    };
    if let (Some(frames), Some(fps)) = (&labels.frames, labels.fps) {
        let points: Vec<(f64, u32)> = frames.iter().filter_map(|f| f.hands.map(|h| (f.frame as f64 / fps, h))).collect();
        draw(&|| steps(0, &points))?;
    }
    let points: Vec<(f64, u32)> = predicted.track.iter().map(|f| (f.t, f.hands)).collect();
    draw(&|| steps(4, &points))?;

    // Events: a tick and "kind square", staggered over three rows so neighbours stay legible.
    let events = |lane: i32, list: &[FramedEvent]| -> Result<(), String> {
        let top = lane_top(lane);
        for (i, e) in list.iter().enumerate() {
            let x = axis.x(e.event.t);
            let row = (i % 3) as i32 * 13;
            root.draw(&PathElement::new(vec![(x, top), (x, top + LANE - 4)], RGBColor(120, 120, 120))).map_err(err)?;
            let sq = e.event.action.square().map(|s| s.to_string()).unwrap_or_default();
            let label = format!("{} {sq} {}", e.event.action.name(), e.event.hand);
            root.draw(&Text::new(label, (x + 2, top + 2 + row), text(10))).map_err(err)?;
        }
        Ok(())
    };
    if let Some(list) = &labels.events {
        draw(&|| events(1, list))?;
    }
    draw(&|| events(5, &predicted.events))?;

    // Moves: the labelled window as a bar; the predicted move where it was made.
    draw(&|| {
        for m in labels.moves.iter().flatten() {
            let (from, to) = move_window(m, tol.seconds);
            let top = lane_top(2);
            root.draw(&Rectangle::new([(axis.x(from), top + 16), (axis.x(to), top + 30)], RGBColor(150, 200, 150).filled())).map_err(err)?;
            root.draw(&Text::new(m.uci.to_string(), (axis.x(m.from) + 2, top + 2), text(12))).map_err(err)?;
        }
        for m in &predicted.moves {
            let (x, top) = (axis.x(m.made_t), lane_top(6));
            root.draw(&Circle::new((x, top + 24), 5, RGBColor(40, 140, 40).filled())).map_err(err)?;
            root.draw(&Text::new(m.uci.to_string(), (x + 2, top + 2), text(12))).map_err(err)?;
        }
        Ok(())
    })?;

    // Rulings: red for an accusation (violation, illegal), orange for a judgement.
    draw(&|| {
        let colour = |accuses: bool| if accuses { RGBColor(200, 30, 30) } else { RGBColor(230, 140, 0) };
        for r in labels.rulings.iter().flatten() {
            let top = lane_top(3);
            let (from, to) = (axis.x(r.from - tol.seconds), axis.x(r.to + tol.seconds));
            root.draw(&Rectangle::new([(from, top + 18), (to.max(from + 2), top + 30)], colour(r.verdict.accuses()).mix(0.5).filled())).map_err(err)?;
            let label = format!("{} {} {}", r.verdict.as_str(), r.article, r.side.char());
            root.draw(&Text::new(label, (from + 2, top + 2), text(12))).map_err(err)?;
        }
        for r in &predicted.rulings {
            let (x, top) = (axis.x(r.t), lane_top(7));
            root.draw(&Circle::new((x, top + 24), 5, colour(r.verdict.accuses()).filled())).map_err(err)?;
            let label = format!("{} {} {}", r.verdict.as_str(), r.article, r.side.char());
            root.draw(&Text::new(label, (x + 2, top + 2), text(12))).map_err(err)?;
        }
        Ok(())
    })?;
    root.present().map_err(err).map_err(at)
}
