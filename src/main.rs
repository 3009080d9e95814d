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
    // OpenCV's own warnings (GStreamer trying a file FFmpeg could not open, and so on) repeat
    // what touchmove's errors say; RUST_LOG=debug shows them.
    if !tracing::enabled!(tracing::Level::DEBUG) {
        let _ = opencv::core::set_log_level(opencv::core::LogLevel::LOG_LEVEL_ERROR);
    }
    let cli = Cli::parse();
    let status = match cli.command {
        Command::Rules(args) => cmd::rules::run(&args, &mut std::io::stdout().lock()),
        Command::Calibrate(args) => cmd::calibrate::run(&args),
        Command::Analyse(args) => cmd::analyse::run(&args),
        Command::Live(args) => cmd::live::run(&args),
        Command::Bench(args) => cmd::bench::run(&args, &mut std::io::stdout().lock()),
        Command::Eval(args) => cmd::eval::run(&args, &mut std::io::stdout().lock()),
        Command::Recognise(args) => cmd::recognise::run(&args, &mut std::io::stdout().lock()),
        Command::EvalPhotos(args) => cmd::eval_photos::run(&args, &mut std::io::stdout().lock()),
    };
    status.report()
}
