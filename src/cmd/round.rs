//! `touchmove round`: the games of several boards, each from its own `touchmove live --serve`,
//! served as one PGN for the round.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use super::Exit;
use super::monitor::{interrupt_flag, until_interrupted};
use crate::serve::{self, round};

/// Arguments of `touchmove round`.
#[derive(Debug, clap::Args)]
#[command(
    about = "Serve one PGN for a round, gathered from the boards' `live --serve`",
    long_about = "Polls each board's game (a `touchmove live --serve` on each camera's machine) every few \
seconds, with its ETag so an unchanged game costs a 304, and serves the round's games one after another, \
in the order the boards are given, as one PGN: GET /round.pgn (with its own ETag, 304 when unchanged), the \
URL a broadcast platform polls for the round. A board that does not answer keeps its last game in the round; \
GET /healthz says \"degraded\" and names it, with the error and how long ago it last answered.\n\n\
A board is given as http://HOST:PORT (its /game.pgn is polled) or as the full URL of a PGN. Plain http \
only: the boards are on the hall's network.\n\n\
Exit codes: 0 stopped with Ctrl-C, 1 a failure while starting, 2 bad arguments (a URL that is not \
http://, an address that cannot be listened on).",
    after_help = "Examples:\n  touchmove round http://10.0.0.11:8080 http://10.0.0.12:8080 --serve 0.0.0.0:8000\n    \
then a broadcast polls http://THIS-MACHINE:8000/round.pgn\n  \
touchmove round http://127.0.0.1:8081 http://127.0.0.1:8082 --every 5"
)]
pub struct Args {
    /// The boards: http://HOST:PORT of each `touchmove live --serve`, or the URL of a PGN.
    #[arg(required = true, value_name = "URL")]
    pub boards: Vec<String>,
    /// Serve the round on ADDR (IP:PORT; default 127.0.0.1:8080, this machine only).
    #[arg(long, value_name = "ADDR", default_value = serve::DEFAULT_ADDR)]
    pub serve: SocketAddr,
    /// Seconds between two polls of a board.
    #[arg(long, value_name = "SECONDS", default_value_t = 2.0)]
    pub every: f64,
}

/// Serves the round until Ctrl-C.
pub fn run(args: &Args) -> Exit {
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
