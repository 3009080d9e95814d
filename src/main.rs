//! The `touchmove` command line: subcommands only; each lives in `touchmove::cmd`.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use touchmove::cmd;

/// touchmove watches an over-the-board chess game and acts as an arbiter's second pair of
/// eyes: it rebuilds the game from what the hands did and flags every breach of FIDE Article 4
/// (touch-move, one hand per move, castling and promotion order, released pieces).
#[derive(Parser)]
#[command(version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Rules(cmd::rules::Args),
    Calibrate(cmd::calibrate::Args),
    Analyse(cmd::analyse::Args),
    Live(cmd::live::Args),
    Round(cmd::round::Args),
    Queue(cmd::queue::Args),
    Worker(cmd::worker::Args),
    Bench(cmd::bench::Args),
    Eval(cmd::eval::Args),
    Recognise(cmd::recognise::Args),
    EvalPhotos(cmd::eval_photos::Args),
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()))
        .init();
    if !tracing::enabled!(target: "opencv", tracing::Level::DEBUG) {
        quiet_opencv();
    }
    let cli = Cli::parse();
    let status = match cli.command {
        Command::Rules(args) => cmd::rules::run(&args, &mut std::io::stdout().lock()),
        Command::Calibrate(args) => cmd::calibrate::run(&args),
        Command::Analyse(args) => cmd::analyse::run(&args),
        Command::Live(args) => cmd::live::run(&args),
        Command::Round(args) => cmd::round::run(&args),
        Command::Queue(args) => cmd::queue::run(&args, &mut std::io::stdout().lock()),
        Command::Worker(args) => cmd::worker::run(&args),
        Command::Bench(args) => cmd::bench::run(&args, &mut std::io::stdout().lock()),
        Command::Eval(args) => cmd::eval::run(&args, &mut std::io::stdout().lock()),
        Command::Recognise(args) => cmd::recognise::run(&args, &mut std::io::stdout().lock()),
        Command::EvalPhotos(args) => cmd::eval_photos::run(&args, &mut std::io::stdout().lock()),
    };
    status.report()
}

/// Keeps what OpenCV and FFmpeg beneath it print (`[mov,mp4,m4a,3gp,3g2,mj2 @ 0x...] moov atom
/// not found`, OpenCV's warnings) off the terminal: touchmove's own errors say what was wrong.
/// RUST_LOG=debug, or a target such as RUST_LOG=opencv=debug, lets them through; a variable the
/// user set is left as it is. (GStreamer is kept quiet by not being tried: see
/// `capture::open_video`.)
fn quiet_opencv() {
    // AV_LOG_QUIET: OpenCV passes it to FFmpeg the first time it opens a video.
    if std::env::var_os("OPENCV_FFMPEG_LOGLEVEL").is_none() {
        // SAFETY: called from `main` before any other thread exists (the tracing subscriber
        // starts none, and nothing else has run), so nothing reads the environment meanwhile.
        unsafe { std::env::set_var("OPENCV_FFMPEG_LOGLEVEL", "-8") };
    }
    if std::env::var_os("OPENCV_LOG_LEVEL").is_none() {
        let _ = opencv::core::set_log_level(opencv::core::LogLevel::LOG_LEVEL_SILENT);
    }
}
