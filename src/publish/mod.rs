//! `live --publish`: every record a board puts on the air (moves, rulings, warnings, claims
//! closed, the move standing, the arbiter's decisions, the start and the end), and its health
//! every few seconds, published to the broker's JetStream on
//! `touchmove.<round>.<board>.<kind>` ([`crate::broker::names`]).
//!
//! Each record is numbered in its run (`seq`, from 1) and carries the round, the board and the
//! run, and goes out with a message id the server drops a second copy of. Records pass through
//! the [`Outbox`] on disk and leave it only once the broker acknowledged them, one at a time and
//! in order: a broker that is away is waited for, and what was decided meanwhile follows when
//! it is back. Health is not queued: it says how the board is now, or nothing.
//!
//! A board claims its id in its round (bucket [`crate::broker::CLAIMS`]) at the start and
//! renews the claim while it runs; a second board with the same id is refused, unless it is the
//! same board started again (same machine and `--out`).

pub mod outbox;
pub mod replay;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use async_nats::jetstream::context::PublishAckFuture;
use async_nats::jetstream::kv;
use async_nats::jetstream::message::PublishMessage;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::broker::{self, Broker, BrokerError, names};
use crate::pgn::Tags;
use crate::serve::unix_seconds;
pub use outbox::{Entry, Outbox};

/// How often a board says how it is.
pub const HEALTH_EVERY: Duration = Duration::from_secs(15);
/// How long an unacknowledged record waits for the broker before it is sent again.
const ACK_WAIT: Duration = Duration::from_secs(2);
/// How long after a failed send the next is tried.
const RETRY: Duration = Duration::from_millis(500);

/// Who publishes: the round and board of the subjects, this run of the board, its game's tags
/// and its page.
#[derive(Clone, Debug)]
pub struct Identity {
    /// The round (the PGN's `--round`).
    pub round: String,
    /// The board's id in the round.
    pub board: String,
    /// This run: random, so that a board started again is told from its earlier run.
    pub run: String,
    /// The game's tags, sent with its start.
    pub tags: Tags,
    /// The board's page (`live --serve`), for the round page to link to.
    pub page: Option<String>,
}

impl Identity {
    /// A new run of `board` in `round`, its game under `tags`, no page.
    pub fn new(round: &str, board: &str, tags: Tags) -> Identity {
        let mut bytes = [0u8; 6];
        let run = match getrandom::fill(&mut bytes) {
            Ok(()) => bytes.iter().map(|b| format!("{b:02x}")).collect(),
            Err(_) => format!("{:x}", SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_nanos())),
        };
        Identity { round: round.into(), board: board.into(), run, tags, page: None }
    }
}

/// What the publishing counts, for `/metrics`.
#[derive(Clone, Debug, Default)]
pub struct PublishMetrics {
    /// Records waiting in the outbox.
    pub waiting: Gauge,
    /// Records the broker acknowledged.
    pub sent: Counter,
    /// Records given up because the outbox was full.
    pub dropped: Counter,
    /// 1 while the broker is reached, else 0.
    pub connected: Gauge,
}

/// A board that cannot publish.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    /// The broker cannot be used.
    #[error(transparent)]
    Broker(#[from] BrokerError),
    /// Another board holds the id.
    #[error("board {board:?} of round {round:?} is already on {url}: {holder}. Two boards cannot share an id in a round; give this one another --board (a board that stopped without saying so frees its id within {lapse} s)")]
    Claimed {
        /// The round.
        round: String,
        /// The board.
        board: String,
        /// The broker.
        url: String,
        /// Who holds it.
        holder: String,
        /// Seconds a claim outlives its board.
        lapse: u64,
    },
    /// The outbox cannot be opened.
    #[error("{}: {source}", path.display())]
    Outbox {
        /// Its file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// What is said to a publishing board.
#[derive(Debug)]
pub enum Command {
    /// A record on the air, as `/events` sends it.
    Record(Value),
    /// Send what waits, until the deadline, and stop.
    Finish(Instant),
}

/// The tags as a board's `start` record carries them.
pub fn tags_value(t: &Tags) -> Value {
    json!({"event": t.event, "site": t.site, "date": t.date.as_str(), "round": t.round, "white": t.white, "black": t.black})
}

/// This machine's name, to say who holds a claim.
fn host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map(|h| h.trim().to_string()).ok().filter(|h| !h.is_empty()).unwrap_or_else(|| "?".into())
}

/// One board's publishing: its outbox, drained into the broker.
pub struct Board {
    broker: Broker,
    who: Identity,
    outbox: Outbox,
    seq: u64,
    claims: kv::Store,
    claim: Value,
    metrics: PublishMetrics,
    /// How the board is, for its health messages.
    health: Box<dyn Fn() -> Value + Send + Sync>,
}

impl Board {
    /// Claims `who`'s id on `broker` and opens the outbox at `outbox` (holding at most
    /// `capacity` records); `home` names the board's folder in its claim.
    pub async fn start(broker: Broker, who: Identity, outbox: &Path, capacity: usize, home: &Path, metrics: PublishMetrics) -> Result<Board, PublishError> {
        broker.events().await?;
        let claims = broker.bucket(broker::CLAIMS, broker::CLAIM_LAPSE).await?;
        let key = names::claim_key(&who.round, &who.board);
        let home = std::fs::canonicalize(home).unwrap_or_else(|_| home.to_owned()).display().to_string();
        let claim = json!({"host": host(), "pid": std::process::id(), "out": home, "run": who.run, "since": unix_seconds(SystemTime::now())});
        let bytes = || claim.to_string().into_bytes().into();
        if claims.create(&key, bytes()).await.is_err() {
            // Held: by this board started again (the same machine and folder), or another.
            let holder: Value = claims.get(&key).await.ok().flatten().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or(Value::Null);
            if holder["host"] == claim["host"] && holder["out"] == claim["out"] {
                tracing::info!("board {:?} of round {:?} started again on this machine: its claim is taken back", who.board, who.round);
            } else if !holder.is_null() {
                let said = format!("{} on {} (pid {}), writing into {}", holder["run"], holder["host"], holder["pid"], holder["out"]).replace('"', "");
                return Err(PublishError::Claimed { round: who.round, board: who.board, url: broker.url.clone(), holder: said, lapse: broker::CLAIM_LAPSE.as_secs() });
            }
            claims.put(&key, bytes()).await.map_err(|e| BrokerError::JetStream { url: broker.url.clone(), why: e.to_string() })?;
        }
        let outbox = Outbox::open(outbox, capacity).map_err(|source| PublishError::Outbox { path: outbox.to_owned(), source })?;
        metrics.waiting.set(outbox.len() as i64);
        metrics.connected.set(1);
        Ok(Board { broker, who, outbox, seq: 0, claims, claim, metrics, health: Box::new(|| json!({})) })
    }

    /// Says how the board is in its health messages: `health` gives the counters.
    pub fn with_health(mut self, health: impl Fn() -> Value + Send + Sync + 'static) -> Board {
        self.health = Box::new(health);
        self
    }

    /// Queues `record`, numbered, with who sent it.
    fn queue(&mut self, mut record: Value) {
        self.seq += 1;
        let kind = record["kind"].as_str().unwrap_or("record").to_string();
        record["round"] = json!(self.who.round);
        record["board"] = json!(self.who.board);
        record["run"] = json!(self.who.run);
        record["seq"] = json!(self.seq);
        if let Some(page) = &self.who.page {
            record["page"] = json!(page);
        }
        if kind == "start" {
            record["tags"] = tags_value(&self.who.tags);
        }
        let entry = Entry { subject: names::subject(&self.who.round, &self.who.board, &kind), id: names::message_id(&self.who.round, &self.who.board, &self.who.run, self.seq), payload: record.to_string() };
        if let Err(e) = self.outbox.push(entry) {
            tracing::error!("the outbox cannot be written ({e}): record {} is sent from memory only", self.seq);
        }
        self.metrics.waiting.set(self.outbox.len() as i64);
        self.metrics.dropped.inner().store(self.outbox.dropped(), std::sync::atomic::Ordering::Relaxed);
    }

    /// Sends `entry` and waits for the broker's acknowledgement.
    async fn send(&self, entry: &Entry) -> Result<(), String> {
        let message = PublishMessage::build().payload(entry.payload.clone().into_bytes().into()).message_id(&entry.id);
        let ack: PublishAckFuture = self.broker.js.send_publish(entry.subject.clone(), message).await.map_err(|e| e.to_string())?;
        match tokio::time::timeout(ACK_WAIT, ack).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err("no acknowledgement".into()),
        }
    }

    /// Sends what waits, oldest first, taking in the records said meanwhile; stops at the
    /// first send that fails (the broker is away). Returns whether everything went.
    async fn drain(&mut self, commands: &mut mpsc::UnboundedReceiver<Command>, finish: &mut Option<Instant>) -> bool {
        loop {
            while let Ok(command) = commands.try_recv() {
                self.take(command, finish);
            }
            let Some(entry) = self.outbox.front().cloned() else { return true };
            match self.send(&entry).await {
                Ok(()) => {
                    if let Err(e) = self.outbox.sent() {
                        tracing::error!("the outbox cannot be written: {e}");
                    }
                    self.metrics.sent.inc();
                    self.metrics.waiting.set(self.outbox.len() as i64);
                    if self.metrics.connected.set(1) == 0 {
                        tracing::warn!("the broker is back: sending the {} records that waited", self.outbox.len() + 1);
                    }
                }
                Err(why) => {
                    if self.metrics.connected.set(0) == 1 {
                        tracing::warn!("{}: {why}; {} records wait in the outbox", self.broker.url, self.outbox.len());
                    }
                    return false;
                }
            }
        }
    }

    fn take(&mut self, command: Command, finish: &mut Option<Instant>) {
        match command {
            Command::Record(record) => self.queue(record),
            Command::Finish(deadline) => *finish = Some(deadline),
        }
    }

    /// Publishes how the board is, where nothing waits (health is not queued).
    async fn health(&self) {
        if !self.outbox.is_empty() {
            return;
        }
        let mut health = (self.health)();
        health["kind"] = json!("health");
        health["round"] = json!(self.who.round);
        health["board"] = json!(self.who.board);
        health["run"] = json!(self.who.run);
        health["at"] = json!(unix_seconds(SystemTime::now()));
        if let Some(page) = &self.who.page {
            health["page"] = json!(page);
        }
        let subject = names::subject(&self.who.round, &self.who.board, "health");
        if let Ok(ack) = self.broker.js.publish(subject, health.to_string().into_bytes().into()).await {
            let _ = tokio::time::timeout(ACK_WAIT, ack).await;
        }
    }

    /// Renews the claim on the id.
    async fn renew(&self) {
        let key = names::claim_key(&self.who.round, &self.who.board);
        let put = self.claims.put(&key, self.claim.to_string().into_bytes().into());
        if let Ok(Err(e)) = tokio::time::timeout(ACK_WAIT, put).await {
            tracing::debug!("the claim on board {:?} is not renewed: {e}", self.who.board);
        }
    }

    /// Publishes until told to finish (or the sender goes): everything is sent, or the deadline
    /// passes with records left in the outbox, for the next run on this folder. Then frees the
    /// board's id. Returns the records left unsent.
    pub async fn run(mut self, mut commands: mpsc::UnboundedReceiver<Command>) -> usize {
        let mut health = tokio::time::interval(HEALTH_EVERY);
        let mut renew = tokio::time::interval(broker::CLAIM_LAPSE / 3);
        let mut finish: Option<Instant> = None;
        loop {
            let all_sent = self.drain(&mut commands, &mut finish).await;
            if let Some(deadline) = finish
                && (all_sent || Instant::now() >= deadline)
            {
                break;
            }
            tokio::select! {
                command = commands.recv() => match command {
                    Some(command) => self.take(command, &mut finish),
                    None => finish = Some(finish.unwrap_or_else(Instant::now)),
                },
                _ = tokio::time::sleep(RETRY), if !self.outbox.is_empty() => {}
                _ = health.tick() => self.health().await,
                _ = renew.tick() => self.renew().await,
            }
        }
        let left = self.outbox.len();
        let key = names::claim_key(&self.who.round, &self.who.board);
        let _ = tokio::time::timeout(ACK_WAIT, self.claims.delete(&key)).await;
        left
    }
}

/// A board's publishing from a thread of its own, for `live`.
#[derive(Debug)]
pub struct Publisher {
    commands: mpsc::UnboundedSender<Command>,
    done: std::sync::mpsc::Receiver<usize>,
    outbox: PathBuf,
}

impl Publisher {
    /// Connects to `url`, claims the board's id and starts publishing, the outbox in `out`.
    pub fn start(url: &str, credentials: &broker::Credentials, who: Identity, out: &Path, capacity: usize, metrics: PublishMetrics, health: impl Fn() -> Value + Send + Sync + 'static) -> Result<Publisher, PublishError> {
        let runtime = broker::runtime("publish").map_err(|source| PublishError::Outbox { path: out.to_owned(), source })?;
        let outbox = out.join("outbox.jsonl");
        let name = format!("touchmove live: board {} of round {}", who.board, who.round);
        let board = runtime.block_on(async {
            let broker = Broker::connect(url, credentials, &name).await?;
            Board::start(broker, who, &outbox, capacity, out, metrics).await
        })?;
        let board = board.with_health(health);
        let (commands, receiver) = mpsc::unbounded_channel();
        let (tell, done) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("publish".into())
            .spawn(move || {
                let left = runtime.block_on(board.run(receiver));
                let _ = tell.send(left);
            })
            .map_err(|source| PublishError::Outbox { path: out.to_owned(), source })?;
        Ok(Publisher { commands, done, outbox })
    }

    /// Where the records to publish are told.
    pub fn records(&self) -> mpsc::UnboundedSender<Command> {
        self.commands.clone()
    }

    /// Sends what waits, for up to `wait`, and stops; what could not be sent stays in the
    /// outbox for the next run on the same `--out`, and is said.
    pub fn finish(self, wait: Duration) {
        let _ = self.commands.send(Command::Finish(Instant::now() + wait));
        match self.done.recv_timeout(wait + Duration::from_secs(3)) {
            Ok(0) => {}
            Ok(left) => eprintln!("{left} records could not reach the broker: they are kept in {} and go out when `live` runs again on this folder", self.outbox.display()),
            Err(_) => eprintln!("the broker did not answer at the end: the records not sent are kept in {}", self.outbox.display()),
        }
    }
}
