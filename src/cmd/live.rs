//! `touchmove live`: the monitor on a camera or stream, in real time, and with `--serve` on the
//! air: the game, the rulings and the arbiter's page over HTTP.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::Exit;
use super::monitor::{GameArgs, OutputArgs, failed, interrupt_flag, until_interrupted};
use crate::capture::Source;
use crate::pgn::Game;
use crate::pipeline;
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
Exit codes: 0 stopped, 1 a failure while running, 2 bad arguments, a source that cannot be opened, an \
address that cannot be listened on (in use) or a --token-file that cannot be read.",
    after_help = "Examples:\n  touchmove live --source 0 --calibration calibration/board1.json --out /srv/broadcast/board1\n  \
                  touchmove live --source rtsp://10.0.0.7/board1 --calibration calibration/board1.json --out /srv/broadcast/board1 \\\n    \
                  --event \"Club Championship\" --round 5.1 --white \"Doe, Jane\" --black \"Roe, Rick\"\n  \
                  touchmove live --source 0 --calibration calibration/board1.json --out /srv/broadcast/board1 --serve 0.0.0.0:8081 \\\n    \
                  --token-file /etc/touchmove/arbiter-token    (then open http://THIS-MACHINE:8081/)"
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
}

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
    let exit = match pipeline::run(&config, interrupted.clone(), &mut |_| {}) {
        Ok(s) => {
            eprintln!("{} frames, {} through the model, {} dropped: {} moves, {} rulings", s.frames, s.analysed, s.dropped, s.moves, s.rulings);
            Exit::Ok
        }
        Err(e) => failed(e),
    };
    if let (Some(air), Some(addr), Exit::Ok) = (&config.on_air, served, &exit) {
        air.end();
        if !interrupted.load(Ordering::Relaxed) {
            eprintln!("the source has ended; still serving everything decided on http://{addr}/ until Ctrl-C");
            until_interrupted(&interrupted);
        }
    }
    exit
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
