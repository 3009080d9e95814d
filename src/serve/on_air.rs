//! What a live run puts on the air: the game (shared with the pipeline's sinks, which keep it in
//! `game.pgn`), every move, ruling and warning in the order decided (all kept, so a client can
//! resume from any of them), the arbiter's decisions and the run's counters.
//!
//! The pipeline only ever appends under a lock held for a push, and wakes the `/events`
//! clients through a `watch` channel, which never waits for them: a slow or vanished client
//! cannot stall it.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use tokio::sync::watch;

use super::decision::{Decision, DecisionLog};
use super::metrics::Metrics;
use crate::pgn::{Game, GameFile};

/// The live run's state on the air, shared by the pipeline and the server.
#[derive(Debug)]
pub struct OnAir {
    out: PathBuf,
    game: Arc<GameFile>,
    /// What `/events` sends, oldest first: the event with id `n` is at `n - 1`.
    log: RwLock<Vec<Arc<str>>>,
    /// The log's length, for the clients waiting on it.
    logged: watch::Sender<usize>,
    decisions: Mutex<DecisionLog>,
    ended: AtomicBool,
    /// With `live --publish`: where everything published is told too, for the broker.
    relay: OnceLock<tokio::sync::mpsc::UnboundedSender<crate::publish::Command>>,
    /// The run's counters.
    pub metrics: Metrics,
}

/// Why a decision was not taken.
#[derive(Debug, thiserror::Error)]
pub enum DecideError {
    /// No ruling has that number (yet).
    #[error("no ruling {0}")]
    NoRuling(u64),
    /// `decisions.jsonl` or `game.pgn` could not be written.
    #[error("{}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// Seconds since the Unix epoch, to the millisecond.
pub fn unix_seconds(at: SystemTime) -> f64 {
    (at.duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64()) * 1000.0).round() / 1000.0
}

impl OnAir {
    /// The state of a run writing into `out`, starting `game` (kept in `out/game.pgn`); makes
    /// `out/decisions.jsonl` empty.
    pub fn new(out: PathBuf, game: Game) -> std::io::Result<OnAir> {
        let file = GameFile::new(out.join("game.pgn"), game);
        Ok(OnAir {
            decisions: Mutex::new(DecisionLog::create(&out.join("decisions.jsonl"))?),
            game: Arc::new(file),
            out,
            log: RwLock::new(Vec::new()),
            logged: watch::channel(0).0,
            ended: AtomicBool::new(false),
            relay: OnceLock::new(),
            metrics: Metrics::default(),
        })
    }

    /// The game, which the pipeline's sinks record into.
    pub fn game(&self) -> &Arc<GameFile> {
        &self.game
    }

    /// The folder of the evidence images.
    pub fn evidence(&self) -> PathBuf {
        self.out.join("evidence")
    }

    /// Sends `event` (a JSON object with its `kind`) to every `/events` client, now and later.
    pub fn publish(&self, event: &Value) {
        let mut log = self.log.write().unwrap_or_else(PoisonError::into_inner);
        log.push(Arc::from(event.to_string()));
        // Told under the lock, so that the count told never goes back (the pipeline and the
        // decisions publish from different threads); telling never waits for a client.
        self.logged.send_replace(log.len());
        // Told under the lock too, so the broker gets the events in the log's order.
        if let Some(relay) = self.relay.get() {
            let _ = relay.send(crate::publish::Command::Record(event.clone()));
        }
    }

    /// Tells `relay` every event published from now on (`live --publish`).
    pub fn relay_to(&self, relay: tokio::sync::mpsc::UnboundedSender<crate::publish::Command>) {
        if self.relay.set(relay).is_err() {
            tracing::warn!("the run is already relayed to a broker");
        }
    }

    /// The events after the first `after`, each with its id.
    pub fn events_after(&self, after: usize) -> Vec<(usize, Arc<str>)> {
        let log = self.log.read().unwrap_or_else(PoisonError::into_inner);
        log.iter().enumerate().skip(after).map(|(i, e)| (i + 1, e.clone())).collect()
    }

    /// How many events have been published.
    pub fn published(&self) -> usize {
        *self.logged.borrow()
    }

    /// Told each time an event is published: the number published so far.
    pub fn subscribe(&self) -> watch::Receiver<usize> {
        self.logged.subscribe()
    }

    /// Says that the source has ended: everything decided is on the air.
    pub fn end(&self) {
        self.ended.store(true, Ordering::Relaxed);
        self.publish(&json!({"kind": "end", "at": unix_seconds(SystemTime::now())}));
    }

    /// Whether the source has ended.
    pub fn ended(&self) -> bool {
        self.ended.load(Ordering::Relaxed)
    }

    /// Takes the arbiter's decision on ruling number `ruling`: appends it to `decisions.jsonl`
    /// (flushed to the disk), writes it into the game after the ruling and publishes it.
    /// Returns the line appended.
    pub fn decide(&self, ruling: u64, decision: &Decision) -> Result<Value, DecideError> {
        if ruling == 0 || ruling > self.game.read(Game::rulings) {
            return Err(DecideError::NoRuling(ruling));
        }
        let line = json!({
            "kind": "decision",
            "ruling": ruling,
            "decision": decision.decision.as_str(),
            "note": decision.note,
            "at": unix_seconds(SystemTime::now()),
        });
        // One decision at a time, from the log to the game, so both hold them in one order.
        let mut log = self.decisions.lock().unwrap_or_else(PoisonError::into_inner);
        let write = |path: PathBuf| move |source| DecideError::Write { path, source };
        log.append(&line).map_err(write(self.out.join("decisions.jsonl")))?;
        self.game.update(|g| g.annotate(ruling, &decision.comment())).map_err(write(self.game.path().to_owned()))?;
        // Published before the next decision is taken: `/events` tells them in the log's order.
        self.publish(&line);
        drop(log);
        Ok(line)
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::Chess;

    use super::*;
    use crate::pgn::Tags;

    #[test]
    fn events_keep_their_ids_and_wake_the_waiting() {
        let dir = tempfile::tempdir().unwrap();
        // An earlier run's decisions, whose ruling numbers mean nothing in this one.
        std::fs::write(dir.path().join("decisions.jsonl"), "{\"kind\":\"decision\",\"ruling\":1}\n").unwrap();
        let air = OnAir::new(dir.path().to_owned(), Game::new(&Chess::default(), Tags::unknown("test"))).unwrap();
        let mut told = air.subscribe();
        for i in 0..3 {
            air.publish(&json!({"kind": "warning", "i": i}));
        }
        assert!(told.has_changed().unwrap());
        assert_eq!(*told.borrow_and_update(), 3);
        let after = air.events_after(1);
        assert_eq!(after.iter().map(|e| e.0).collect::<Vec<_>>(), vec![2, 3]);
        assert!(after[0].1.contains("\"i\":1"));
        assert!(matches!(air.decide(1, &Decision::parse(br#"{"decision":"uphold"}"#).unwrap()), Err(DecideError::NoRuling(1))));
        assert_eq!(std::fs::read_to_string(dir.path().join("decisions.jsonl")).unwrap(), "", "emptied at the start, nothing written for a ruling that is not there");
    }
}
