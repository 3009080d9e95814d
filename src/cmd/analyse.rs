//! `touchmove analyse`: a recording (a video, or a series of photos), start to end, into events,
//! rulings, a PGN and evidence.

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
reads each frame (skipping frames where nothing moved), the game decoder reads the moves from the board with \
the chess prior (a move is final once it has led for a second), the tracker reads the hands' touches, lifts \
and releases against each move, and the rule engine rebuilds the game and rules on Article 4.\n\n\
The recording is a video, or a series of photos: a folder, or a quoted glob such as 'game/*.jpg', read in \
name order (img2 before img10), turned upright by their EXIF orientation, and timed by their EXIF capture \
times (else one second apart). The game decoder reads the moves from the positions: one still a move is \
enough (a whole move missed between two stills is read too); the hands, and so the Article 4 rulings, need \
a video or a camera taking several stills a second.\n\n\
Writes to --out: events.jsonl (the physical events, with frame numbers), rulings.jsonl (moves, rulings, \
warnings, as `touchmove rules` prints them), track.jsonl (the board and hand count per analysed frame), \
game.pgn (with the time each move was completed), evidence/ (a JPEG of the board at each ruling, the \
squares it rests on marked), summary.json, and with --overlay annotated.mp4. Every file is written as the \
analysis goes: Ctrl-C stops and keeps what was decided.\n\n\
The clock is not watched: a move is complete at the opponent's first touch or the end of the footage.\n\n\
Exit codes: 0 done, 1 a failure while running (model, output), 2 bad arguments, an unreadable video, or a \
folder or glob with no photos or with a file that is not one (the outputs up to it are kept).",
    after_help = "Examples:\n  touchmove analyse fixtures/clips/touch-own-4.3.1/clip.mp4 --calibration fixtures/clips/touch-own-4.3.1/calibration.json \\\n    --fen 'rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2' --out /tmp/touch-own\n  \
touchmove analyse 'game/*.jpg' --calibration calibration/board1.json --out /tmp/game    (photos; quote the glob)"
)]
pub struct Args {
    /// The recording: a video (any OpenCV reads), or a series of photos (JPEG or PNG): a folder,
    /// or a quoted glob such as 'game/*.jpg'.
    #[arg(value_name = "VIDEO|FOLDER|'GLOB'")]
    pub recording: PathBuf,
    /// The outputs.
    #[command(flatten)]
    pub output: OutputArgs,
    /// The board, the game and the model.
    #[command(flatten)]
    pub game: GameArgs,
}

/// Runs the command.
pub fn run(args: &Args) -> Exit {
    let source = Source::recording(&args.recording);
    // Checked before any output is made: the frames to come, for the progress bar.
    let total = match &source {
        Source::Stills(stills) => match stills.photos() {
            Ok(photos) => photos.len() as u64,
            Err(e) => return Exit::BadInput(e.to_string()),
        },
        Source::File(path) if !path.is_file() => return Exit::BadInput(format!("{}: no such file", path.display())),
        Source::File(path) => crate::capture::open_video(path)
            .and_then(|c| opencv::prelude::VideoCaptureTraitConst::get(&c, opencv::videoio::CAP_PROP_FRAME_COUNT))
            .map_or(0, |n| n.max(0.0) as u64),
        Source::Camera(_) | Source::Url(_) => 0,
    };
    let config = match args.game.config(source.clone(), args.output.out.clone(), false, args.output.overlay) {
        Ok(config) => pipeline::Config { tags: args.output.pgn.tags(false), ..config },
        Err(e) => return Exit::BadInput(e),
    };
    let bar = if std::io::IsTerminal::is_terminal(&std::io::stderr()) { ProgressBar::new(total) } else { ProgressBar::hidden() };
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
                source,
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
