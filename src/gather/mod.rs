//! `round --nats`: the round gathered from the boards' records on the broker, through a
//! durable consumer of the round's subjects (`touchmove.<round>.>`), into the round's games
//! ([`Games`]) and the round's event log (for `/events`).
//!
//! Each record is taken, then acknowledged: one taken but not acknowledged (the round stopped in
//! between) comes again and is skipped as a repeat. At a restart, the records the consumer had
//! delivered are read again from the stream (an ordered consumer, up to the durable one's last
//! delivered sequence, not its acknowledgement floor: a batch delivered but not all acknowledged
//! would otherwise come again only after the acknowledgement wait, behind later records of the
//! same board) to rebuild the games, and the durable consumer goes on from where it stopped. The broker going away is waited for; the consumer is made again where it vanished.

pub mod games;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_nats::jetstream::consumer::{self, AckPolicy, DeliverPolicy};
use futures_util::StreamExt as _;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};
use serde_json::Value;
use tokio::sync::watch;

use crate::broker::{Broker, names};
pub use games::{Games, Taken};

/// `/events` keeps this many of the latest events for clients that resume.
const KEPT_EVENTS: usize = 200_000;

/// What the round counts, for `/metrics`.
#[derive(Debug)]
pub struct RoundMetrics {
    taken: Counter,
    repeated: Counter,
    refused: Counter,
    boards: Gauge,
    waiting: Gauge,
    delay: Histogram,
    registry: Registry,
}

impl Default for RoundMetrics {
    fn default() -> RoundMetrics {
        let delay = Histogram::new([0.01, 0.025, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 30.0]);
        let mut m = RoundMetrics { taken: Counter::default(), repeated: Counter::default(), refused: Counter::default(), boards: Gauge::default(), waiting: Gauge::default(), delay, registry: Registry::with_prefix("touchmove_round") };
        m.registry.register("records_taken", "Records taken into the round", m.taken.clone());
        m.registry.register("records_repeated", "Records skipped as already taken (redelivered, resent)", m.repeated.clone());
        m.registry.register("records_refused", "Records that were not a record (named in the log)", m.refused.clone());
        m.registry.register("boards", "Boards that have published in the round", m.boards.clone());
        m.registry.register("records_waiting", "Records on the broker the round has not taken yet (at the last one taken)", m.waiting.clone());
        m.registry.register_with_unit("delay", "From a record's arrival on the broker to its being in the round's PGN", Unit::Seconds, m.delay.clone());
        m
    }
}

impl RoundMetrics {
    /// The OpenMetrics text exposition.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if let Err(e) = prometheus_client::encoding::text::encode(&mut out, &self.registry) {
            tracing::error!("the metrics cannot be written: {e}");
        }
        out
    }
}

/// The round as gathered: its games, its events, its counters.
#[derive(Debug)]
pub struct Round {
    /// The round's name (`--round`).
    pub name: String,
    games: Mutex<Games>,
    /// What `/events` sends: each record taken (health aside), with its stream sequence as id.
    log: RwLock<VecDeque<(u64, Arc<str>)>>,
    /// The id of the last event logged, for the clients waiting on it.
    logged: watch::Sender<u64>,
    /// Whether the records acknowledged before a restart are read again.
    caught_up: AtomicBool,
    /// Whether the broker answered the last time it was asked.
    connected: AtomicBool,
    /// The counters.
    pub metrics: RoundMetrics,
}

impl Round {
    /// The round `name`, nothing gathered yet.
    pub fn new(name: &str) -> Round {
        Round { name: name.into(), games: Mutex::new(Games::default()), log: RwLock::new(VecDeque::new()), logged: watch::channel(0).0, caught_up: AtomicBool::new(false), connected: AtomicBool::new(false), metrics: RoundMetrics::default() }
    }

    /// The games, locked.
    pub fn games(&self) -> std::sync::MutexGuard<'_, Games> {
        self.games.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes the record `payload`, stored on the broker at stream sequence `sequence` at
    /// `published` (Unix nanoseconds).
    pub fn take(&self, sequence: u64, published: i128, payload: &[u8]) {
        let record: Value = match serde_json::from_slice(payload) {
            Ok(record) => record,
            Err(e) => {
                self.metrics.refused.inc();
                tracing::warn!("record {sequence} on the broker is not JSON ({e}); skipped");
                return;
            }
        };
        let taken = {
            let mut games = self.games();
            let taken = games.take(&record);
            self.metrics.boards.set(games.len() as i64);
            taken
        };
        match taken {
            Ok(Taken::Taken) => {
                self.metrics.taken.inc();
                if record["kind"] != "health" {
                    let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i128);
                    self.metrics.delay.observe(((now - published).max(0) as f64) / 1e9);
                    let mut log = self.log.write().unwrap_or_else(PoisonError::into_inner);
                    if log.len() == KEPT_EVENTS {
                        log.pop_front();
                    }
                    log.push_back((sequence, Arc::from(record.to_string())));
                    self.logged.send_replace(sequence);
                }
            }
            Ok(Taken::Repeated) => {
                self.metrics.repeated.inc();
            }
            Err(e) => {
                self.metrics.refused.inc();
                tracing::warn!("record {sequence} on the broker ({} of board {}): {e}; skipped", record["kind"], record["board"]);
            }
        }
    }

    /// The events after id `after`, each with its id (from the oldest kept, where `after` is
    /// older).
    pub fn events_after(&self, after: u64) -> Vec<(u64, Arc<str>)> {
        let log = self.log.read().unwrap_or_else(PoisonError::into_inner);
        let from = log.partition_point(|(id, _)| *id <= after);
        log.range(from..).cloned().collect()
    }

    /// Told each time an event is logged: its id.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.logged.subscribe()
    }

    /// Whether the records taken before a restart have been read again.
    pub fn caught_up(&self) -> bool {
        self.caught_up.load(Ordering::Relaxed)
    }

    /// Whether the broker answered the last time it was asked.
    pub fn connected(&self) -> bool {
        self.connected.load(Ordering::Relaxed)
    }
}

/// The durable consumer's name for `round`.
pub fn durable_name(round: &str) -> String {
    format!("round-{}", names::token(round))
}

/// The durable consumer `round` is gathered through.
pub fn durable_config(round: &str) -> consumer::pull::Config {
    consumer::pull::Config {
        durable_name: Some(durable_name(round)),
        filter_subject: names::round_filter(round),
        ack_policy: AckPolicy::Explicit,
        deliver_policy: DeliverPolicy::All,
        ack_wait: Duration::from_secs(30),
        max_ack_pending: 10_000,
        ..Default::default()
    }
}

/// Gathers `round` from `broker` for as long as the process runs.
pub async fn follow(broker: Broker, round: Arc<Round>) {
    loop {
        if let Err(e) = follow_once(&broker, &round).await {
            round.connected.store(false, Ordering::Relaxed);
            tracing::warn!("{}: {e}; following the round again in a second", broker.url);
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// Makes (or finds) the durable consumer, reads again what it had acknowledged (once), and takes
/// its records until it fails.
async fn follow_once(broker: &Broker, round: &Round) -> Result<(), String> {
    let stream = broker.events().await.map_err(|e| e.to_string())?;
    let mut consumer: consumer::PullConsumer = stream.get_or_create_consumer(&durable_name(&round.name), durable_config(&round.name)).await.map_err(|e| e.to_string())?;
    round.connected.store(true, Ordering::Relaxed);
    if !round.caught_up() {
        let delivered = consumer.info().await.map_err(|e| e.to_string())?.delivered.stream_sequence;
        if delivered > 0 {
            read_again(&stream, round, delivered).await?;
        }
        round.caught_up.store(true, Ordering::Relaxed);
    }
    let mut messages = consumer.stream().max_messages_per_batch(1000).heartbeat(Duration::from_secs(5)).expires(Duration::from_secs(30)).messages().await.map_err(|e| e.to_string())?;
    while let Some(message) = messages.next().await {
        let message = match message {
            Ok(message) => message,
            Err(e) if matches!(e.kind(), consumer::pull::MessagesErrorKind::MissingHeartbeat) => {
                round.connected.store(false, Ordering::Relaxed);
                tracing::debug!("the broker missed a heartbeat");
                continue;
            }
            Err(e) => return Err(e.to_string()),
        };
        round.connected.store(true, Ordering::Relaxed);
        let Ok(info) = message.info() else { continue };
        let (sequence, published, pending) = (info.stream_sequence, info.published.unix_timestamp_nanos(), info.pending);
        round.take(sequence, published, &message.payload);
        round.metrics.waiting.set(pending as i64);
        message.ack().await.map_err(|e| e.to_string())?;
    }
    Err("the consumer's messages ended".into())
}

/// Reads the round's records again from the start of the stream up to stream sequence `last`
/// (the last the durable consumer delivered before a restart).
async fn read_again(stream: &async_nats::jetstream::stream::Stream, round: &Round, last: u64) -> Result<(), String> {
    let config = consumer::pull::OrderedConfig { filter_subject: names::round_filter(&round.name), deliver_policy: DeliverPolicy::All, ..Default::default() };
    let ordered = stream.create_consumer(config).await.map_err(|e| e.to_string())?;
    let mut messages = ordered.messages().await.map_err(|e| e.to_string())?;
    let mut read = 0u64;
    while let Some(message) = messages.next().await {
        let message = message.map_err(|e| e.to_string())?;
        let Ok(info) = message.info() else { continue };
        let (sequence, published, pending) = (info.stream_sequence, info.published.unix_timestamp_nanos(), info.pending);
        round.take(sequence, published, &message.payload);
        read += 1;
        if sequence >= last || pending == 0 {
            break;
        }
    }
    tracing::info!("round {:?}: {read} records taken before the restart read again", round.name);
    Ok(())
}
