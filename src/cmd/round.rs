//! `touchmove round`: the games of several boards served as one PGN for the round, gathered
//! from the broker the boards publish to (`--nats`), or polled from each board's own
//! `touchmove live --serve`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use super::Exit;
use super::monitor::{interrupt_flag, until_interrupted};
use crate::broker::{self, Broker};
use crate::gather::{self, Round};
use crate::serve::{self, gathered, round};

/// Arguments of `touchmove round`.
#[derive(Debug, clap::Args)]
#[command(
    about = "Serve one PGN for a round, from the broker the boards publish to, or from the boards' `live --serve`",
    long_about = "With --nats URL --round R: gathers round R from the NATS JetStream broker that the boards \
publish to (`live --publish URL --board ID --round R`), through a durable consumer (round-R): every board's \
game, every move with its [%ts], the rulings and the arbiter's decisions as comments, each board's PGN what its \
own game.pgn holds. Boards come in board order (numbers first). Restarted, it reads again what it had taken and \
goes on from where it stopped; a broker that goes away is waited for. It serves GET /round.pgn (ETag, 304 when \
unchanged: the URL a broadcast polls), /events (every record of the round as Server-Sent Events, ids the \
records' places on the broker, resumable with Last-Event-ID), / (the arbiters' round page: each board's \
diagram, last move and open rulings, linking to the board's own page), /boards.json, /boards/ID.pgn, /healthz \
and /metrics.\n\n\
Without a broker: polls each board's game (a `touchmove live --serve` on each camera's machine) every few \
seconds, with its ETag so an unchanged game costs a 304, and serves the round's games one after another, \
in the order the boards are given, as one PGN: GET /round.pgn (with its own ETag, 304 when unchanged), the \
URL a broadcast platform polls for the round. A board that does not answer keeps its last game in the round; \
GET /healthz says \"degraded\" and names it, with the error and how long ago it last answered.\n\n\
A board is given as http://HOST:PORT (its /game.pgn is polled) or as the full URL of a PGN. Plain http \
only: the boards are on the hall's network.\n\n\
Exit codes: 0 stopped with Ctrl-C, 1 a failure while starting, 2 bad arguments (a URL that is not \
http://, an address that cannot be listened on, a broker that cannot be reached or refuses the credentials).",
    after_help = "Examples:\n  touchmove round --nats nats://broker.hall:4222 --round 5 --serve 0.0.0.0:8000 --nats-token-file /etc/touchmove/nats-token\n  \
touchmove round http://10.0.0.11:8080 http://10.0.0.12:8080 --serve 0.0.0.0:8000\n    \
then a broadcast polls http://THIS-MACHINE:8000/round.pgn\n  \
touchmove round http://127.0.0.1:8081 http://127.0.0.1:8082 --every 5"
)]
pub struct Args {
    /// The boards: http://HOST:PORT of each `touchmove live --serve`, or the URL of a PGN
    /// (without --nats).
    #[arg(required_unless_present = "nats", conflicts_with = "nats", value_name = "URL")]
    pub boards: Vec<String>,
    /// Gather the round from the NATS JetStream broker at URL instead.
    #[arg(long, value_name = "nats://HOST:PORT", requires = "round", help_heading = "Broker")]
    pub nats: Option<String>,
    /// The round to gather (the boards' --round).
    #[arg(long, value_name = "ROUND", requires = "nats", help_heading = "Broker")]
    pub round: Option<String>,
    /// The broker's credentials.
    #[command(flatten)]
    pub credentials: broker::Credentials,
    /// Serve the round on ADDR (IP:PORT; default 127.0.0.1:8080, this machine only).
    #[arg(long, value_name = "ADDR", default_value = serve::DEFAULT_ADDR)]
    pub serve: SocketAddr,
    /// Seconds between two polls of a board.
    #[arg(long, value_name = "SECONDS", default_value_t = 2.0)]
    pub every: f64,
}

/// Serves the round until Ctrl-C.
pub fn run(args: &Args) -> Exit {
    if let (Some(url), Some(name)) = (&args.nats, &args.round) {
        return gather(url, name, args);
    }
    if !(0.1..=3600.0).contains(&args.every) {
        return Exit::BadInput(format!("--every {}: must be between 0.1 and 3600 seconds", args.every));
    }
    let urls = match args.boards.iter().map(|u| round::game_url(u)).collect::<Result<Vec<_>, _>>() {
        Ok(urls) => urls,
        Err(e) => return Exit::BadInput(e.to_string()),
    };
    let listener = match serve::bind(args.serve) {
        Ok(listener) => listener,
        Err(e) => return Exit::BadInput(e.to_string()),
    };
    let round = Arc::new(round::Round::new(urls));
    let interrupted = interrupt_flag();
    if let Err(e) = round::poll(&round, Duration::from_secs_f64(args.every)) {
        return Exit::Failed(format!("the polling threads cannot start: {e}"));
    }
    match serve::start(listener, round::routes(round)) {
        Ok(addr) => eprintln!("serving the round of {} boards on http://{addr}/round.pgn (health: /healthz) until Ctrl-C", args.boards.len()),
        Err(e) => return Exit::Failed(e.to_string()),
    }
    until_interrupted(&interrupted);
    Exit::Ok
}

/// Gathers round `name` from the broker at `url` and serves it until Ctrl-C.
fn gather(url: &str, name: &str, args: &Args) -> Exit {
    let runtime = match broker::runtime("gather") {
        Ok(runtime) => runtime,
        Err(e) => return Exit::Failed(format!("the broker's thread cannot start: {e}")),
    };
    let broker = match runtime.block_on(async {
        let broker = Broker::connect(url, &args.credentials, &format!("touchmove round {name}")).await?;
        broker.events().await.map(|_| broker)
    }) {
        Ok(broker) => broker,
        Err(e) => return Exit::BadInput(e.to_string()),
    };
    let listener = match serve::bind(args.serve) {
        Ok(listener) => listener,
        Err(e) => return Exit::BadInput(e.to_string()),
    };
    let round = Arc::new(Round::new(name));
    let interrupted = interrupt_flag();
    runtime.spawn(gather::follow(broker, round.clone()));
    match serve::start(listener, gathered::routes(round)) {
        Ok(addr) => eprintln!("gathering round {name:?} from {url}; serving it on http://{addr}/ (/round.pgn, /events, /healthz) until Ctrl-C"),
        Err(e) => return Exit::Failed(e.to_string()),
    }
    until_interrupted(&interrupted);
    Exit::Ok
}
