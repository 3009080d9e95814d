//! `touchmove live`: the monitor on a camera or stream, in real time.

use super::Exit;
use super::monitor::{GameArgs, OutputArgs, failed, interrupt_flag};
use crate::capture::Source;
use crate::pipeline;

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
Exit codes: 0 stopped, 1 a failure while running, 2 bad arguments or a source that cannot be opened.",
    after_help = "Examples:\n  touchmove live --source 0 --calibration calibration/board1.json --out /srv/broadcast/board1\n  \
                  touchmove live --source rtsp://10.0.0.7/board1 --calibration calibration/board1.json --out /srv/broadcast/board1 \\\n    \
                  --event \"Club Championship\" --round 5.1 --white \"Doe, Jane\" --black \"Roe, Rick\""
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
}

/// Runs the command until the source ends or Ctrl-C.
pub fn run(args: &Args) -> Exit {
    let source: Source = args.source.parse().unwrap_or_else(|never| match never {});
    let config = match args.game.config(source, args.output.out.clone(), true, args.output.overlay) {
        Ok(config) => pipeline::Config { tags: args.output.pgn.tags(true), ..config },
        Err(e) => return Exit::BadInput(e),
    };
    match pipeline::run(&config, interrupt_flag(), &mut |_| {}) {
        Ok(s) => {
            eprintln!("{} frames, {} through the model, {} dropped: {} moves, {} rulings", s.frames, s.analysed, s.dropped, s.moves, s.rulings);
            Exit::Ok
        }
        Err(e) => failed(e),
    }
}
