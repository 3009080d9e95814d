//! What a live run counts, for `GET /metrics` (OpenMetrics text, which Prometheus reads, through
//! the `prometheus-client` crate): frames read, dropped and through the model, the pipeline's
//! latency, moves, rulings, warnings, camera reconnects, the clients on `/events`, and with
//! `--publish` the records waiting for the broker, sent and dropped.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};

use crate::pipeline::Summary;
use crate::publish::PublishMetrics;

/// The latency histogram's buckets, seconds.
const LATENCY_BUCKETS: [f64; 10] = [0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 2.0, 5.0, 10.0];

/// The counters, updated by the pipeline after every frame and read by scrapes; neither waits
/// on the other but for the registry's lock while a scrape encodes it.
#[derive(Debug)]
pub struct Metrics {
    frames_read: Counter,
    dropped: Counter,
    analysed: Counter,
    moves: Counter,
    rulings: Counter,
    warnings: Counter,
    reconnects: Counter,
    clients: Gauge,
    latency: Histogram,
    frames: AtomicU64,
    /// Clients on `/events` now.
    pub(super) listeners: AtomicU64,
    registry: Mutex<Registry>,
}

impl Default for Metrics {
    fn default() -> Metrics {
        let metrics = Metrics {
            frames_read: Counter::default(),
            dropped: Counter::default(),
            analysed: Counter::default(),
            moves: Counter::default(),
            rulings: Counter::default(),
            warnings: Counter::default(),
            reconnects: Counter::default(),
            clients: Gauge::default(),
            latency: Histogram::new(LATENCY_BUCKETS),
            frames: AtomicU64::new(0),
            listeners: AtomicU64::new(0),
            registry: Mutex::new(Registry::with_prefix("touchmove")),
        };
        {
            let mut r = metrics.registry.lock().unwrap_or_else(PoisonError::into_inner);
            r.register("frames_read", "Frames read from the source, dropped ones included", metrics.frames_read.clone());
            r.register("frames_dropped", "Frames dropped because the pipeline was behind", metrics.dropped.clone());
            r.register("frames_analysed", "Frames run through the board model", metrics.analysed.clone());
            r.register("moves", "Moves recorded", metrics.moves.clone());
            r.register("rulings", "Rulings given", metrics.rulings.clone());
            r.register("warnings", "Warnings (board moved, contradictions, corrections)", metrics.warnings.clone());
            r.register("camera_reconnects", "Times the camera or stream was reopened", metrics.reconnects.clone());
            r.register("event_clients", "Clients connected to /events", metrics.clients.clone());
            r.register_with_unit("latency", "From the capture of the frame that revealed an event to its decision", Unit::Seconds, metrics.latency.clone());
        }
        metrics
    }
}

/// Sets `counter` to `value` (the pipeline counts; the counter shows its count).
fn store(counter: &Counter, value: u64) {
    counter.inner().store(value, Ordering::Relaxed);
}

impl Metrics {
    /// Takes in the run so far: `summary`, the frames `dropped` and the camera `reconnects`
    /// counted by the capture, and this frame's latency, if it gave an event.
    pub fn observe(&self, summary: &Summary, dropped: u64, reconnects: u64, latency: Option<f64>) {
        self.frames.store(summary.frames, Ordering::Relaxed);
        store(&self.frames_read, summary.frames + dropped);
        store(&self.dropped, dropped);
        store(&self.analysed, summary.analysed);
        store(&self.reconnects, reconnects);
        store(&self.moves, summary.moves);
        store(&self.rulings, summary.rulings);
        store(&self.warnings, summary.warnings);
        if let Some(l) = latency {
            self.latency.observe(l);
        }
    }

    /// Frames through the pipeline so far.
    pub fn frames(&self) -> u64 {
        self.frames.load(Ordering::Relaxed)
    }

    /// How the run is, for a board's health messages on the broker.
    pub fn health(&self) -> serde_json::Value {
        serde_json::json!({
            "frames": self.frames(),
            "frames_dropped": self.dropped.get(),
            "moves": self.moves.get(),
            "rulings": self.rulings.get(),
            "camera_reconnects": self.reconnects.get(),
        })
    }

    /// Counts the publishing to the broker too (`live --publish`).
    pub fn register_publishing(&self, publishing: &PublishMetrics) {
        let mut r = self.registry.lock().unwrap_or_else(PoisonError::into_inner);
        r.register("outbox_records", "Records waiting in the outbox for the broker", publishing.waiting.clone());
        r.register("published_records", "Records the broker acknowledged", publishing.sent.clone());
        r.register("outbox_dropped_records", "Records given up because the outbox was full", publishing.dropped.clone());
        r.register("broker_connected", "1 while the broker acknowledges records, else 0", publishing.connected.clone());
    }

    /// The OpenMetrics text exposition.
    pub fn render(&self) -> String {
        self.clients.set(self.listeners.load(Ordering::Relaxed) as i64);
        let mut out = String::new();
        let registry = self.registry.lock().unwrap_or_else(PoisonError::into_inner);
        if let Err(e) = prometheus_client::encoding::text::encode(&mut out, &registry) {
            tracing::error!("the metrics cannot be written: {e}");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counters_and_the_latency_histogram() {
        let metrics = Metrics::default();
        let publishing = PublishMetrics::default();
        metrics.register_publishing(&publishing);
        publishing.waiting.set(3);
        publishing.sent.inc_by(7);
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
            "touchmove_event_clients 0",
            "touchmove_latency_seconds_bucket{le=\"0.5\"} 50",
            "touchmove_latency_seconds_bucket{le=\"+Inf\"} 100",
            "touchmove_latency_seconds_count 100",
            "touchmove_outbox_records 3",
            "touchmove_published_records_total 7",
            "touchmove_broker_connected 0",
            "# EOF",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
        }
        // Every sample line is `name{labels} value` with a number as the value.
        for l in text.lines().filter(|l| !l.starts_with('#')) {
            let value = l.rsplit(' ').next().unwrap();
            assert!(value.parse::<f64>().is_ok(), "{l}");
        }
    }
}
