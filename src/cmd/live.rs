//! `touchmove live`: the monitor on a camera or stream, in real time, and with `--serve` on the
//! air: the game, the rulings and the arbiter's page over HTTP.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::Exit;
use super::monitor::{GameArgs, OutputArgs, failed, interrupt_flag, until_interrupted};
use crate::broker;
use crate::capture::Source;
use crate::pgn::Game;
use crate::pipeline;
use crate::publish::{Identity, PublishError, PublishMetrics, Publisher};
use crate::serve::{self, OnAir, Token};

/// Arguments of `touchmove live`.
#[derive(Debug, clap::Args)]
#[command(
    about = "Watch a live camera or stream: rulings as they happen, a PGN a broadcast can poll",
    long_about = "Runs the monitor in real time on a camera (0, 1, ...), a stream URL (RTSP, HTTP), or a file or a \
series of photos (a folder, or a quoted glob such as 'game/*.jpg') played as if live, at the times they \
were taken. Rulings and moves are printed on stdout as JSON Lines the moment they are decided; game.pgn in \
--out is rewritten atomically after every move (a broadcast polls it), and shows a move as soon as it stands on \
the board, marked \"not yet completed\" until the opponent's first touch completes it; the other outputs are those of \
`analyse`. When detection falls behind, the oldest frames are dropped and counted; a camera that drops out is \
reopened every second. Ctrl-C stops and flushes everything.\n\n\
With --serve, the run is also on the air over HTTP (127.0.0.1:8080 unless an address is given; 0.0.0.0:8080 \
for the whole network): GET / is the arbiter's page (the board, the moves, each ruling with its evidence, \
uphold and dismiss); /game.pgn the game for a broadcast to poll (ETag, 304 when unchanged); /events every \
move, ruling and warning as Server-Sent Events (JSON, resumable with Last-Event-ID); /evidence/NAME.jpg the \
evidence images; /healthz; /metrics (Prometheus). The arbiter's decisions, POST /rulings/N/decision with \
{\"decision\": \"uphold\"|\"dismiss\", \"note\": \"...\"} and the header Authorization: Bearer TOKEN, are appended \
to decisions.jsonl in --out and written into the PGN after the ruling. The token is printed on stderr at the \
start, or read from --token-file. When the source ends, everything decided stays served until Ctrl-C.\n\n\
With --publish nats://HOST:PORT --board ID, every record above, and the board's health every 15 s, also \
goes to the NATS JetStream broker on touchmove.ROUND.ID.KIND (ROUND is --round), for `touchmove round --nats` \
to gather the round from. Each record has an id the broker drops a second copy of. While the broker is away, \
records wait in OUT/outbox.jsonl (at most --outbox-max; the oldest are dropped past it, counted in /metrics \
and logged) and go out in order when it is back; left at the end, they go out when `live` runs again on the same \
--out. The id is claimed in its round: a second board with the same --board is refused.\n\n\
Exit codes: 0 stopped, 1 a failure while running, 2 bad arguments, a source that cannot be opened, an \
address that cannot be listened on (in use), a --token-file that cannot be read, a broker that cannot be \
reached or refuses the credentials at the start, or a --board already on the broker in that round.",
    after_help = "Examples:\n  touchmove live --source 0 --calibration calibration/board1.json --out /srv/broadcast/board1\n  \
                  touchmove live --source rtsp://10.0.0.7/board1 --calibration calibration/board1.json --out /srv/broadcast/board1 \\\n    \
                  --event \"Club Championship\" --round 5.1 --white \"Doe, Jane\" --black \"Roe, Rick\"\n  \
                  touchmove live --source 0 --calibration calibration/board1.json --out /srv/broadcast/board1 --serve 0.0.0.0:8081 \\\n    \
                  --token-file /etc/touchmove/arbiter-token    (then open http://THIS-MACHINE:8081/)\n  \
                  touchmove live --source 0 --calibration calibration/board1.json --out /srv/board1 --round 5 \\\n    \
                  --publish nats://broker.hall:4222 --board 1 --nats-token-file /etc/touchmove/nats-token"
)]
pub struct Args {
    /// Camera index, stream URL, file, or a folder of photos or a quoted glob ('game/*.jpg').
    #[arg(long, value_name = "0|URL|FILE|FOLDER|'GLOB'")]
    pub source: String,
    /// The outputs.
    #[command(flatten)]
    pub output: OutputArgs,
    /// The board, the game and the model.
    #[command(flatten)]
    pub game: GameArgs,
    /// Serve the game, the rulings and the arbiter's page over HTTP on ADDR (IP:PORT; default
    /// 127.0.0.1:8080, this machine only).
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = serve::DEFAULT_ADDR, help_heading = "On the air")]
    pub serve: Option<SocketAddr>,
    /// The arbiter's token for decisions: the first line of FILE (default: a random one,
    /// printed at the start).
    #[arg(long, value_name = "FILE", requires = "serve", help_heading = "On the air")]
    pub token_file: Option<PathBuf>,
    /// Publish every record to the NATS JetStream broker at URL, for `touchmove round --nats`.
    #[arg(long, value_name = "nats://HOST:PORT", requires = "board", help_heading = "Broker")]
    pub publish: Option<String>,
    /// This board's id in its round (the table number): the subjects' BOARD.
    #[arg(long, value_name = "ID", requires = "publish", help_heading = "Broker")]
    pub board: Option<String>,
    /// At most this many records wait for a broker that is away (the oldest are dropped past it).
    #[arg(long, value_name = "N", default_value_t = 100_000, help_heading = "Broker")]
    pub outbox_max: usize,
    /// The broker's credentials.
    #[command(flatten)]
    pub credentials: broker::Credentials,
}

/// How long the records left at the end may take to reach the broker.
const FINISH_WAIT: Duration = Duration::from_secs(10);

/// Runs the command until the source ends or Ctrl-C.
pub fn run(args: &Args) -> Exit {
    let source: Source = args.source.parse().unwrap_or_else(|never| match never {});
    let mut config = match args.game.config(source, args.output.out.clone(), true, args.output.overlay) {
        Ok(config) => pipeline::Config { tags: args.output.pgn.tags(true), ..config },
        Err(e) => return Exit::BadInput(e),
    };
    let interrupted = interrupt_flag();
    let mut served = None;
    if let Some(addr) = args.serve {
        match on_air(addr, args.token_file.as_deref(), &config) {
            Ok((air, bound)) => {
                config.on_air = Some(air);
                served = Some(bound);
            }
            Err(exit) => return exit,
        }
    }
    let mut publisher = None;
    if let (Some(url), Some(board)) = (&args.publish, &args.board) {
        match publish_to(url, board, args, &mut config, served) {
            Ok(p) => publisher = Some(p),
            Err(exit) => return exit,
        }
    }
    let exit = match pipeline::run(&config, interrupted.clone(), &mut |_| {}) {
        Ok(s) => {
            eprintln!("{} frames, {} through the model, {} dropped: {} moves, {} rulings", s.frames, s.analysed, s.dropped, s.moves, s.rulings);
            Exit::Ok
        }
        Err(e) => failed(e),
    };
    if let (Some(air), Exit::Ok) = (&config.on_air, &exit) {
        air.end();
    }
    if let Some(publisher) = publisher {
        publisher.finish(FINISH_WAIT);
    }
    if let (Some(addr), Exit::Ok) = (served, &exit)
        && !interrupted.load(Ordering::Relaxed)
    {
        eprintln!("the source has ended; still serving everything decided on http://{addr}/ until Ctrl-C");
        until_interrupted(&interrupted);
    }
    exit
}

/// Starts publishing the run to the broker at `url` as `board` of the round of `--round`: the
/// run's state on the air is made where `--serve` did not make it, and relayed to the broker.
/// A broker that cannot be reached or refuses the credentials, or a board id already claimed,
/// is bad input.
fn publish_to(url: &str, board: &str, args: &Args, config: &mut pipeline::Config, served: Option<SocketAddr>) -> Result<Publisher, Exit> {
    if board.trim().is_empty() {
        return Err(Exit::BadInput("--board: give the board's id in its round (a table number)".into()));
    }
    let out = &config.out;
    std::fs::create_dir_all(out).map_err(|e| Exit::Failed(format!("{}: {e}", out.display())))?;
    let air = match &config.on_air {
        Some(air) => air.clone(),
        None => {
            let air = OnAir::new(out.clone(), Game::new(&config.start, config.tags.clone())).map_err(|e| Exit::Failed(format!("{}: {e}", out.join("decisions.jsonl").display())))?;
            let air = Arc::new(air);
            config.on_air = Some(air.clone());
            air
        }
    };
    let metrics = PublishMetrics::default();
    air.metrics.register_publishing(&metrics);
    let mut who = Identity::new(&args.output.pgn.round, board, config.tags.clone());
    // The page as the hall's network reaches it: this machine's name where it serves every
    // address.
    who.page = served.map(|addr| {
        if addr.ip().is_unspecified() {
            format!("http://{}:{}/", std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default().trim(), addr.port())
        } else {
            format!("http://{addr}/")
        }
    });
    let health = {
        let air = air.clone();
        move || air.metrics.health()
    };
    let publisher = Publisher::start(url, &args.credentials, who, out, args.outbox_max, metrics, health).map_err(|e| match e {
        PublishError::Broker(_) | PublishError::Claimed { .. } => Exit::BadInput(e.to_string()),
        PublishError::Outbox { .. } => Exit::Failed(e.to_string()),
    })?;
    air.relay_to(publisher.records());
    eprintln!("publishing board {board:?} of round {:?} to {url}", args.output.pgn.round);
    Ok(publisher)
}

/// Puts the run on the air on `addr`: the token (from `token_file`, else a random one, printed),
/// the address bound, the server started. An address in use or a token file that cannot serve
/// is bad input. Returns the state on the air and the address served (the port chosen, for 0).
fn on_air(addr: SocketAddr, token_file: Option<&std::path::Path>, config: &pipeline::Config) -> Result<(Arc<OnAir>, SocketAddr), Exit> {
    let token = match token_file {
        Some(path) => Token::read(path),
        None => Token::random(),
    }
    .map_err(|e| Exit::BadInput(e.to_string()))?;
    let listener = serve::bind(addr).map_err(|e| Exit::BadInput(e.to_string()))?;
    let air = match OnAir::new(config.out.clone(), Game::new(&config.start, config.tags.clone())) {
        Ok(air) => Arc::new(air),
        Err(e) => return Err(Exit::Failed(format!("{}: {e}", config.out.join("decisions.jsonl").display()))),
    };
    let served = serve::start(listener, serve::live::routes(air.clone(), token.clone())).map_err(|e| Exit::Failed(e.to_string()))?;
    eprintln!("serving on http://{served}/ (the arbiter's page; /game.pgn, /events, /metrics)");
    match token_file {
        Some(path) => eprintln!("arbiter token: the one in {}", path.display()),
        None => eprintln!("arbiter token: {}", token.as_str()),
    }
    Ok((air, served))
}
