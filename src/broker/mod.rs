//! The NATS JetStream broker that the boards (`live --publish`), the round (`round --nats`)
//! and the archive (`queue`, `worker`) share: how it is reached (a `nats://` URL, a token or an
//! NKey), and the streams and buckets each part uses, made where they are missing.
//!
//! Every part connects once at its start, where a URL that does not resolve, a broker that does
//! not answer, credentials it refuses or a broker without JetStream are said at once, naming the
//! URL ([`BrokerError`], exit code 2). Once connected, the client reconnects by itself for as
//! long as the process runs, every quarter second at first and at most every two seconds: a
//! broker that goes away later is waited for, not an error.

pub mod names;

use std::path::{Path, PathBuf};
use std::time::Duration;

use async_nats::jetstream::{self, kv, stream};

/// The stream of every board's records, subjects `touchmove.<round>.<board>.<kind>`.
pub const EVENTS: &str = "TOUCHMOVE_EVENTS";
/// The archive's work queue: one message per job, on [`JOB_SUBJECT`].
pub const JOBS: &str = "TOUCHMOVE_JOBS";
/// The subject of the archive's jobs.
pub const JOB_SUBJECT: &str = "touchmove-jobs.analyse";
/// The bucket of the boards' claims on their ids, one key per round and board, lapsing when a
/// board stops renewing it.
pub const CLAIMS: &str = "touchmove-boards";
/// The bucket of the archive's jobs' states (waiting, running, done, failed), one key per job.
pub const ARCHIVE: &str = "touchmove-archive";

/// How long the server remembers a message id to drop a second copy of it. The boards' own
/// numbering drops copies sent later still (see `gather`).
pub const DUPLICATE_WINDOW: Duration = Duration::from_secs(20 * 60);
/// A board's claim on its id lapses this long after its last renewal (a board that died).
pub const CLAIM_LAPSE: Duration = Duration::from_secs(30);

/// The credentials the broker is reached with (none: anonymously).
#[derive(Clone, Debug, Default, clap::Args)]
#[command(next_help_heading = "Broker")]
pub struct Credentials {
    /// The broker's token: the first line of FILE (the server's `authorization { token }`).
    #[arg(long, value_name = "FILE", conflicts_with = "nats_nkey")]
    pub nats_token_file: Option<PathBuf>,
    /// An NKey seed (`SU...`, as `nsc` or `nk -gen user` writes it) in FILE; the server knows
    /// its public key (`authorization { users = [{nkey: U...}] }`).
    #[arg(long, value_name = "FILE")]
    pub nats_nkey: Option<PathBuf>,
}

/// Why the broker cannot be used, said at the start.
#[derive(Debug, thiserror::Error)]
pub enum BrokerError {
    /// The URL is not a broker's.
    #[error("{url}: not a NATS URL (nats://HOST:PORT)")]
    Url {
        /// The URL given.
        url: String,
    },
    /// A credentials file cannot be read.
    #[error("{}: {why}", path.display())]
    Credentials {
        /// The file.
        path: PathBuf,
        /// Why.
        why: String,
    },
    /// The broker cannot be reached, or refuses the credentials.
    #[error("{url}: {why}")]
    Connect {
        /// The URL.
        url: String,
        /// What went wrong.
        why: String,
    },
    /// The broker answers but its JetStream does not (not enabled, a stream that cannot be
    /// made).
    #[error("{url}: JetStream: {why}")]
    JetStream {
        /// The URL.
        url: String,
        /// What went wrong.
        why: String,
    },
}

/// The first line of the file at `path`, trimmed, refused where empty.
fn first_line(path: &Path) -> Result<String, BrokerError> {
    let error = |why: String| BrokerError::Credentials { path: path.to_owned(), why };
    let text = std::fs::read_to_string(path).map_err(|e| error(e.to_string()))?;
    let line = text.lines().next().unwrap_or("").trim().to_string();
    if line.is_empty() { Err(error("empty: expected the secret on its first line".into())) } else { Ok(line) }
}

/// A connection to the broker.
#[derive(Clone, Debug)]
pub struct Broker {
    /// The URL it was reached on, to name it in messages.
    pub url: String,
    /// The connection (reconnecting by itself).
    pub client: async_nats::Client,
    /// Its JetStream.
    pub js: jetstream::Context,
}

impl Broker {
    /// Connects to `url` with `credentials` as `name` (shown in the server's connection list),
    /// and checks that JetStream answers.
    pub async fn connect(url: &str, credentials: &Credentials, name: &str) -> Result<Broker, BrokerError> {
        if !(url.starts_with("nats://") || url.starts_with("tls://")) || url.split("://").nth(1).is_none_or(str::is_empty) {
            return Err(BrokerError::Url { url: url.into() });
        }
        let mut options = async_nats::ConnectOptions::new()
            .name(name)
            .connection_timeout(Duration::from_secs(5))
            .max_reconnects(None)
            .reconnect_delay_callback(|attempts| Duration::from_millis((250 * attempts as u64).clamp(250, 2000)))
            .event_callback(|event| async move {
                match event {
                    async_nats::Event::Disconnected => tracing::warn!("the broker is away; reconnecting"),
                    async_nats::Event::Connected => tracing::info!("connected to the broker"),
                    other => tracing::debug!("broker: {other}"),
                }
            });
        if let Some(path) = &credentials.nats_token_file {
            options = options.token(first_line(path)?);
        }
        if let Some(path) = &credentials.nats_nkey {
            options = options.nkey(first_line(path)?);
        }
        let connect_error = |why: String| BrokerError::Connect { url: url.into(), why };
        let client = options.connect(url).await.map_err(|e| {
            use async_nats::ConnectErrorKind as K;
            connect_error(match e.kind() {
                K::ServerParse => "not a NATS URL (nats://HOST:PORT)".into(),
                K::Dns => format!("the host does not resolve ({e})"),
                K::Authentication | K::AuthorizationViolation => format!("the broker refuses the credentials ({e}); give --nats-token-file or --nats-nkey as it expects"),
                K::TimedOut => "the broker does not answer (timed out)".into(),
                K::Io => format!("the broker does not answer ({e})"),
                _ => e.to_string(),
            })
        })?;
        let js = jetstream::new(client.clone());
        // The account's JetStream information: no answer where JetStream is not enabled.
        let answer = client.request("$JS.API.INFO", "".into()).await.map_err(|e| BrokerError::JetStream { url: url.into(), why: format!("{e} (is the server started with -js?)") })?;
        let info: serde_json::Value = serde_json::from_slice(&answer.payload).unwrap_or_default();
        if let Some(error) = info.get("error") {
            return Err(BrokerError::JetStream { url: url.into(), why: error["description"].as_str().unwrap_or("refused").to_string() });
        }
        Ok(Broker { url: url.into(), client, js })
    }

    fn jetstream_error(&self, e: impl std::fmt::Display) -> BrokerError {
        BrokerError::JetStream { url: self.url.clone(), why: e.to_string() }
    }

    /// The stream of the boards' records, made if missing (file storage, message ids
    /// remembered for [`DUPLICATE_WINDOW`]).
    pub async fn events(&self) -> Result<stream::Stream, BrokerError> {
        let config = stream::Config {
            name: EVENTS.into(),
            subjects: vec![format!("{}.>", names::EVENTS_PREFIX)],
            storage: stream::StorageType::File,
            duplicate_window: DUPLICATE_WINDOW,
            ..Default::default()
        };
        self.js.get_or_create_stream(config).await.map_err(|e| self.jetstream_error(e))
    }

    /// The archive's work queue, made if missing: each job is taken by one worker, and leaves
    /// the queue when acknowledged.
    pub async fn jobs(&self) -> Result<stream::Stream, BrokerError> {
        let config = stream::Config {
            name: JOBS.into(),
            subjects: vec![JOB_SUBJECT.into()],
            retention: stream::RetentionPolicy::WorkQueue,
            storage: stream::StorageType::File,
            duplicate_window: DUPLICATE_WINDOW,
            ..Default::default()
        };
        self.js.get_or_create_stream(config).await.map_err(|e| self.jetstream_error(e))
    }

    /// The bucket `name`, made if missing, its keys lapsing after `lapse` (never: zero). Its
    /// stream is made here as the client's own `create_key_value` would, without asking for the
    /// account's limits first, which nats-server 2.9 answers in a form the client does not read.
    pub async fn bucket(&self, name: &str, lapse: Duration) -> Result<kv::Store, BrokerError> {
        let config = stream::Config {
            name: format!("KV_{name}"),
            subjects: vec![format!("$KV.{name}.>")],
            max_messages_per_subject: 1,
            max_age: lapse,
            storage: stream::StorageType::File,
            allow_rollup: true,
            deny_delete: true,
            allow_direct: true,
            discard: stream::DiscardPolicy::New,
            num_replicas: 1,
            ..Default::default()
        };
        self.js.get_or_create_stream(config).await.map_err(|e| self.jetstream_error(format!("bucket {name}: {e}")))?;
        self.js.get_key_value(name).await.map_err(|e| self.jetstream_error(format!("bucket {name}: {e}")))
    }
}

/// A tokio runtime for the broker's work on a thread of its own (the pipeline and the HTTP
/// server keep theirs).
pub fn runtime(name: &str) -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread().worker_threads(1).thread_name(name).enable_all().build()
}
