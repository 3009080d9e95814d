//! What a live run counts, for `GET /metrics` in Prometheus's text format: frames read, dropped
//! and through the model, the pipeline's latency, moves, rulings, warnings, camera reconnects,
//! and the clients on `/events`.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use crate::pipeline::Summary;

/// The latency quantiles are taken over this many of the latest latencies.
const RECENT: usize = 1000;

/// The counters, updated by the pipeline after every frame and read by scrapes; the pipeline
/// never waits on a scrape longer than a copy of the latest latencies takes.
#[derive(Debug, Default)]
pub struct Metrics {
    frames: AtomicU64,
    analysed: AtomicU64,
    dropped: AtomicU64,
    reconnects: AtomicU64,
    moves: AtomicU64,
    rulings: AtomicU64,
    warnings: AtomicU64,
    /// Clients on `/events` now.
    pub(super) listeners: AtomicU64,
    latency: Mutex<Latency>,
}

/// Seconds from the capture of the frame that revealed an event to its decision.
#[derive(Debug, Default)]
struct Latency {
    recent: VecDeque<f64>,
    sum: f64,
    count: u64,
}

impl Metrics {
    /// Takes in the run so far: `summary`, the frames `dropped` and the camera `reconnects`
    /// counted by the capture, and this frame's latency, if it gave an event.
    pub fn observe(&self, summary: &Summary, dropped: u64, reconnects: u64, latency: Option<f64>) {
        self.frames.store(summary.frames, Ordering::Relaxed);
        self.analysed.store(summary.analysed, Ordering::Relaxed);
        self.dropped.store(dropped, Ordering::Relaxed);
        self.reconnects.store(reconnects, Ordering::Relaxed);
        self.moves.store(summary.moves, Ordering::Relaxed);
        self.rulings.store(summary.rulings, Ordering::Relaxed);
        self.warnings.store(summary.warnings, Ordering::Relaxed);
        if let Some(l) = latency {
            let mut latency = self.latency.lock().unwrap_or_else(PoisonError::into_inner);
            if latency.recent.len() == RECENT {
                latency.recent.pop_front();
            }
            latency.recent.push_back(l);
            latency.sum += l;
            latency.count += 1;
        }
    }

    /// Frames through the pipeline so far.
    pub fn frames(&self) -> u64 {
        self.frames.load(Ordering::Relaxed)
    }

    /// The Prometheus text exposition (format 0.0.4).
    pub fn render(&self) -> String {
        let (mut recent, sum, count) = {
            let l = self.latency.lock().unwrap_or_else(PoisonError::into_inner);
            (Vec::from(l.recent.clone()), l.sum, l.count)
        };
        recent.sort_by(f64::total_cmp);
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let (frames, dropped) = (get(&self.frames), get(&self.dropped));
        let mut out = String::new();
        let mut metric = |name: &str, kind: &str, help: &str, value: u64| {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}");
        };
        metric("touchmove_frames_read_total", "counter", "Frames read from the source, dropped ones included.", frames + dropped);
        metric("touchmove_frames_dropped_total", "counter", "Frames dropped because the pipeline was behind.", dropped);
        metric("touchmove_frames_analysed_total", "counter", "Frames run through the board model.", get(&self.analysed));
        metric("touchmove_moves_total", "counter", "Moves recorded.", get(&self.moves));
        metric("touchmove_rulings_total", "counter", "Rulings given.", get(&self.rulings));
        metric("touchmove_warnings_total", "counter", "Warnings (board moved, contradictions, corrections).", get(&self.warnings));
        metric("touchmove_camera_reconnects_total", "counter", "Times the camera or stream was reopened.", get(&self.reconnects));
        metric("touchmove_event_clients", "gauge", "Clients connected to /events.", get(&self.listeners));
        let name = "touchmove_latency_seconds";
        let _ = writeln!(out, "# HELP {name} From the capture of the frame that revealed an event to its decision (quantiles over the latest {RECENT}).\n# TYPE {name} summary");
        for q in [0.5, 0.9, 0.95, 0.99] {
            let value = if recent.is_empty() { f64::NAN } else { recent[((recent.len() - 1) as f64 * q).round() as usize] };
            let _ = writeln!(out, "{name}{{quantile=\"{q}\"}} {value}");
        }
        let _ = writeln!(out, "{name}_sum {sum}\n{name}_count {count}");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counters_and_quantiles() {
        let metrics = Metrics::default();
        let summary = Summary { frames: 100, analysed: 40, moves: 2, rulings: 1, ..Summary::default() };
        for i in 1..=100 {
            metrics.observe(&summary, 5, 1, Some(f64::from(i) / 100.0));
        }
        let text = metrics.render();
        for line in [
            "touchmove_frames_read_total 105",
            "touchmove_frames_dropped_total 5",
            "touchmove_frames_analysed_total 40",
            "touchmove_moves_total 2",
            "touchmove_rulings_total 1",
            "touchmove_camera_reconnects_total 1",
            "touchmove_latency_seconds{quantile=\"0.5\"} 0.51",
            "touchmove_latency_seconds{quantile=\"0.95\"} 0.95",
            "touchmove_latency_seconds_count 100",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
        }
        // Every sample line is `name{labels} value` with a number (NaN included) as the value.
        for l in text.lines().filter(|l| !l.starts_with('#')) {
            let value = l.rsplit(' ').next().unwrap();
            assert!(value.parse::<f64>().is_ok(), "{l}");
        }
    }
}
