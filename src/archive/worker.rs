//! `touchmove worker`: takes the archive's jobs one at a time from the broker's work queue
//! (the durable consumer [`CONSUMER`], shared by every worker), runs the analysis of each into
//! a folder of its own beside the results, renames it into place once everything is written,
//! records the job done with its moves, rulings and game, and only then acknowledges it.
//!
//! While a job runs, the worker tells the broker it is still at it every third of the lease; a
//! worker that dies stops telling, and the job goes to another worker when the lease runs out.
//! A job whose results are already in place (its worker died after writing them) is recorded
//! done without being run again, so each job has one result. A job that cannot be done (a file
//! missing, not a video, a bad option) fails at once and is not retried; one that fails
//! otherwise, or whose workers keep dying on it, is tried [`ATTEMPTS`] times.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use async_nats::jetstream::AckKind;
use async_nats::jetstream::consumer::{self, AckPolicy};
use async_nats::jetstream::kv;
use futures_util::StreamExt as _;

use super::{Job, Stage, State};
use crate::broker::{self, Broker, BrokerError};
use crate::serve::unix_seconds;

/// The durable consumer the workers share.
pub const CONSUMER: &str = "workers";
/// A job is tried at most this many times.
pub const ATTEMPTS: u64 = 3;

/// Why an analysis did not give results.
#[derive(Debug)]
pub enum Failure {
    /// The job cannot be done as asked (exit code 2 of `analyse`): not retried.
    BadInput(String),
    /// It failed while running: tried again, up to [`ATTEMPTS`].
    Failed(String),
    /// The worker was told to stop: the job goes back to the queue.
    Interrupted,
}

/// Runs the analysis of a job into a folder.
pub type Analyse = dyn Fn(&Job, &Path) -> Result<(), Failure> + Send + Sync;

/// How a worker works.
pub struct Worker {
    /// Its name in the jobs' states.
    pub name: String,
    /// The shared results folder.
    pub results: PathBuf,
    /// How long a job may go without word from its worker before it goes to another.
    pub lease: Duration,
    /// Set to stop after the job at hand.
    pub stop: Arc<AtomicBool>,
    /// The analysis.
    pub analyse: Arc<Analyse>,
}

/// The queue's consumer for the workers, made if missing (its lease is `lease` where this makes
/// it).
pub async fn consumer(broker: &Broker, lease: Duration) -> Result<consumer::PullConsumer, BrokerError> {
    let stream = broker.jobs().await?;
    let config = consumer::pull::Config {
        durable_name: Some(CONSUMER.into()),
        ack_policy: AckPolicy::Explicit,
        ack_wait: lease,
        max_deliver: ATTEMPTS as i64 + 1,
        max_ack_pending: 10_000,
        ..Default::default()
    };
    stream.get_or_create_consumer(CONSUMER, config).await.map_err(|e| BrokerError::JetStream { url: broker.url.clone(), why: e.to_string() })
}

/// Writes `state` as the job's.
async fn record(states: &kv::Store, state: &mut State) {
    state.at = unix_seconds(std::time::SystemTime::now());
    let text = serde_json::to_string(state).unwrap_or_default();
    if let Err(e) = states.put(&state.job.id, text.into_bytes().into()).await {
        tracing::warn!("the state of job {} is not recorded: {e}", state.job.id);
    }
}

impl Worker {
    /// Takes jobs until told to stop.
    pub async fn run(&self, broker: &Broker) -> Result<(), BrokerError> {
        let consumer = consumer(broker, self.lease).await?;
        let states = broker.bucket(broker::ARCHIVE, Duration::ZERO).await?;
        std::fs::create_dir_all(&self.results).map_err(|e| BrokerError::Credentials { path: self.results.clone(), why: e.to_string() })?;
        while !self.stop.load(Ordering::Relaxed) {
            let batch = consumer.fetch().max_messages(1).expires(Duration::from_secs(2)).messages().await;
            let mut batch = match batch {
                Ok(batch) => batch,
                Err(e) => {
                    tracing::warn!("{}: no job fetched ({e}); trying again", broker.url);
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    continue;
                }
            };
            while let Some(message) = batch.next().await {
                match message {
                    Ok(message) => self.take(message, &states).await,
                    Err(e) => tracing::debug!("fetching a job: {e}"),
                }
            }
        }
        Ok(())
    }

    /// Does the job `message` holds, and says so.
    async fn take(&self, message: async_nats::jetstream::Message, states: &kv::Store) {
        let job: Job = match serde_json::from_slice(&message.payload) {
            Ok(job) => job,
            Err(e) => {
                tracing::error!("a job on the queue is not one ({e}); dropped");
                let _ = message.ack_with(AckKind::Term).await;
                return;
            }
        };
        let attempts = message.info().map_or(1, |i| i.delivered.max(1) as u64);
        let mut state = State { worker: Some(self.name.clone()), attempts, ..State::waiting(job.clone()) };
        let done_folder = self.results.join(&job.id);
        if attempts > ATTEMPTS {
            state.stage = Stage::Failed;
            state.error = Some(format!("its workers stopped without finishing it {ATTEMPTS} times"));
            record(states, &mut state).await;
            let _ = message.ack_with(AckKind::Term).await;
            return;
        }
        if !done_folder.is_dir() {
            state.stage = Stage::Running;
            record(states, &mut state).await;
            tracing::info!("job {} (attempt {attempts}): {}", job.id, job.recording.display());
            let started = Instant::now();
            match self.analyse_leased(&job, &message).await {
                Ok(()) => state.seconds = Some(started.elapsed().as_secs_f64()),
                Err(Failure::Interrupted) => {
                    state.stage = Stage::Waiting;
                    state.error = Some(format!("{} stopped during it", self.name));
                    record(states, &mut state).await;
                    let _ = message.ack_with(AckKind::Nak(None)).await;
                    return;
                }
                Err(failure) => {
                    let (error, retry) = match failure {
                        Failure::BadInput(e) => (e, false),
                        Failure::Failed(e) => (e, attempts < ATTEMPTS),
                        Failure::Interrupted => unreachable!("handled above"),
                    };
                    tracing::warn!("job {} failed: {error}{}", job.id, if retry { "; it will be tried again" } else { "" });
                    state.stage = if retry { Stage::Waiting } else { Stage::Failed };
                    state.error = Some(error);
                    state.seconds = Some(started.elapsed().as_secs_f64());
                    record(states, &mut state).await;
                    let kind = if retry { AckKind::Nak(Some(Duration::from_secs(2))) } else { AckKind::Term };
                    let _ = message.ack_with(kind).await;
                    return;
                }
            }
        }
        state.stage = Stage::Done;
        state.error = None;
        state.results = Some(done_folder.clone());
        let summary: serde_json::Value = std::fs::read_to_string(done_folder.join("summary.json")).ok().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default();
        state.moves = summary["moves"].as_u64();
        state.rulings = summary["rulings"].as_u64();
        state.pgn = std::fs::read_to_string(done_folder.join("game.pgn")).ok();
        record(states, &mut state).await;
        if let Err(e) = message.double_ack().await {
            tracing::warn!("job {} is done but its acknowledgement was not confirmed ({e}): if it comes again, its results are kept", job.id);
        }
    }

    /// Runs the analysis of `job` into a folder of this worker's, telling the broker it is at
    /// it, and renames the folder into place. Where another worker's results got there first,
    /// they are kept.
    async fn analyse_leased(&self, job: &Job, message: &async_nats::jetstream::Message) -> Result<(), Failure> {
        let partial = self.results.join(format!(".{}.{}.partial", job.id, self.name));
        if partial.exists() {
            std::fs::remove_dir_all(&partial).map_err(|e| Failure::Failed(format!("{}: {e}", partial.display())))?;
        }
        let (analyse, for_it, out) = (self.analyse.clone(), job.clone(), partial.clone());
        let mut running = tokio::task::spawn_blocking(move || analyse(&for_it, &out));
        let mut beat = tokio::time::interval(self.lease / 3);
        beat.tick().await;
        let result = loop {
            tokio::select! {
                done = &mut running => break done.unwrap_or_else(|e| Err(Failure::Failed(format!("the analysis stopped: {e}")))),
                _ = beat.tick() => {
                    if let Err(e) = message.ack_with(AckKind::Progress).await {
                        tracing::debug!("job {}: the broker was not told the work goes on: {e}", job.id);
                    }
                }
            }
        };
        if let Err(failure) = result {
            let _ = std::fs::remove_dir_all(&partial);
            return Err(failure);
        }
        let done = self.results.join(&job.id);
        if let Err(e) = std::fs::rename(&partial, &done) {
            if done.is_dir() {
                tracing::info!("job {}: another worker's results got there first and are kept", job.id);
                let _ = std::fs::remove_dir_all(&partial);
            } else {
                return Err(Failure::Failed(format!("{} -> {}: {e}", partial.display(), done.display())));
            }
        }
        Ok(())
    }
}

/// Puts `jobs` on the queue, each recorded waiting first.
pub async fn add(broker: &Broker, jobs: &[Job]) -> Result<(), BrokerError> {
    broker.jobs().await?;
    let states = broker.bucket(broker::ARCHIVE, Duration::ZERO).await?;
    let error = |e: String| BrokerError::JetStream { url: broker.url.clone(), why: e };
    for job in jobs {
        let mut state = State::waiting(job.clone());
        record(&states, &mut state).await;
        let message = async_nats::jetstream::message::PublishMessage::build().payload(serde_json::to_vec(job).unwrap_or_default().into()).message_id(&job.id);
        let ack = broker.js.send_publish(broker::JOB_SUBJECT, message).await.map_err(|e| error(e.to_string()))?;
        ack.await.map_err(|e| error(e.to_string()))?;
    }
    Ok(())
}

/// Every job's state, in the order of their ids.
pub async fn states(broker: &Broker) -> Result<Vec<State>, BrokerError> {
    let states = broker.bucket(broker::ARCHIVE, Duration::ZERO).await?;
    let error = |e: String| BrokerError::JetStream { url: broker.url.clone(), why: e };
    let mut keys: Vec<String> = Vec::new();
    let mut listed = states.keys().await.map_err(|e| error(e.to_string()))?;
    while let Some(key) = listed.next().await {
        keys.push(key.map_err(|e| error(e.to_string()))?);
    }
    keys.sort();
    let mut out = Vec::new();
    for key in keys {
        if let Some(bytes) = states.get(&key).await.map_err(|e| error(e.to_string()))?
            && let Ok(state) = serde_json::from_slice::<State>(&bytes)
        {
            out.push(state);
        }
    }
    Ok(out)
}
