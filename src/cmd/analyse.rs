//! `touchmove analyse`: a recording, start to end, into events, rulings, a PGN and evidence.

use std::path::PathBuf;
use std::sync::atomic::Ordering;

use indicatif::{ProgressBar, ProgressStyle};

use super::Exit;
use super::monitor::{GameArgs, OutputArgs, failed, interrupt_flag};
use crate::capture::Source;
use crate::pipeline;

/// Arguments of `touchmove analyse`.
#[derive(Debug, clap::Args)]
#[command(
    about = "Analyse a recorded game: events, rulings, PGN and evidence",
    long_about = "Runs the whole monitor on a recording, frame by frame with nothing dropped: the board model \
reads each frame (skipping frames where nothing moved), the tracker turns readings into touches, lifts, \
releases and the hand that made each, and the rule engine rebuilds the game and rules on Article 4.\n\n\
Writes to --out: events.jsonl (the physical events, with frame numbers), rulings.jsonl (moves, rulings, \
warnings, as `touchmove rules` prints them), track.jsonl (the board and hand count per analysed frame), \
game.pgn (with the time each move was completed), evidence/ (a JPEG of the board at each ruling, the \
squares it rests on marked), summary.json, and with --overlay annotated.mp4. Every file is written as the \
analysis goes: Ctrl-C stops and keeps what was decided.\n\n\
The clock is not watched: a move is complete at the opponent's first touch or the end of the footage.\n\n\
Exit codes: 0 done, 1 a failure while running (model, output), 2 bad arguments or an unreadable video.",
    after_help = "Example:\n  touchmove analyse fixtures/clips/touch-own-4.3.1/clip.mp4 --calibration fixtures/clips/touch-own-4.3.1/calibration.json \\\n    --fen 'rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2' --out /tmp/touch-own"
)]
pub struct Args {
    /// The recording (any video OpenCV reads).
    #[arg(value_name = "VIDEO")]
    pub video: PathBuf,
    /// The outputs.
    #[command(flatten)]
    pub output: OutputArgs,
    /// The board, the game and the model.
    #[command(flatten)]
    pub game: GameArgs,
}

/// Runs the command.
pub fn run(args: &Args) -> Exit {
    if !args.video.is_file() {
        return Exit::BadInput(format!("{}: no such file", args.video.display()));
    }
    let config = match args.game.config(Source::File(args.video.clone()), args.output.out.clone(), false, args.output.overlay) {
        Ok(config) => pipeline::Config { tags: args.output.pgn.tags(false), ..config },
        Err(e) => return Exit::BadInput(e),
    };
    let total = opencv::videoio::VideoCapture::from_file(&args.video, opencv::videoio::CAP_ANY)
        .and_then(|c| opencv::prelude::VideoCaptureTraitConst::get(&c, opencv::videoio::CAP_PROP_FRAME_COUNT))
        .unwrap_or(0.0);
    let bar = if std::io::IsTerminal::is_terminal(&std::io::stderr()) { ProgressBar::new(total.max(0.0) as u64) } else { ProgressBar::hidden() };
    bar.set_style(ProgressStyle::with_template("{bar:40} {pos}/{len} frames {per_sec} {msg}").unwrap_or_else(|_| ProgressStyle::default_bar()));
    let stop = interrupt_flag();
    let result = pipeline::run(&config, stop.clone(), &mut |p| {
        bar.set_position(p.frames);
        bar.set_message(format!("{:.1}s, {} moves, {} rulings", p.t, p.moves, p.rulings));
    });
    bar.finish_and_clear();
    match result {
        Ok(s) => {
            eprintln!(
                "{}: {} frames ({} through the model) in {:.1}s ({:.1} fps, {:.2}x real time): {} events, {} moves, {} rulings{} -> {}",
                args.video.display(),
                s.frames,
                s.analysed,
                s.seconds,
                s.frames as f64 / s.seconds.max(1e-9),
                s.video_seconds / s.seconds.max(1e-9),
                s.events,
                s.moves,
                s.rulings,
                if stop.load(Ordering::Relaxed) { " (interrupted)" } else { "" },
                args.output.out.display()
            );
            Exit::Ok
        }
        Err(e) => failed(e),
    }
}
