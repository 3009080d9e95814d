//! `touchmove queue`: an archive's recordings put on the broker's work queue for
//! `touchmove worker`s (`add`), and where every job stands (`status`).

use std::path::PathBuf;

use super::Exit;
use crate::archive::{Job, Stage, worker};
use crate::broker::{self, Broker};

/// Arguments of `touchmove queue`.
#[derive(Debug, clap::Args)]
#[command(
    about = "Put an archive's recordings on the broker's work queue for `touchmove worker`s, and see where they stand",
    long_about = "`queue add` makes one job per recording (a video, or a folder of photos): `touchmove analyse` of it \
with its calibration and the options given after `--`, run by whichever `touchmove worker` takes it. The \
files are named by their absolute paths, so they must be where every worker sees them (a shared folder \
mounted at the same path). A job is named by its recording's folder and name and a hash of the whole job: the \
same job added twice is one, and its results are kept once.\n\n\
`queue status` lists every job: waiting, running (and on which worker), done (moves, rulings, the results' \
folder) or failed (with the error), and the counts of each. A job naming a file that does not exist or is not \
a video fails with that error and is not retried; one whose worker dies is taken by another.\n\n\
Exit codes: 0 done, 1 a failure on the broker, 2 bad arguments or a broker that cannot be reached or \
refuses the credentials.",
    after_help = "Examples:\n  touchmove queue add --nats nats://broker:4222 /archive/round5/*.mp4 --calibration /archive/hall.json -- --threads 1\n  \
touchmove queue add --nats nats://broker:4222 fixtures/clips/*/clip.mp4    (each clip's calibration.json beside it)\n  \
touchmove queue status --nats nats://broker:4222"
)]
pub struct Args {
    /// What to do.
    #[command(subcommand)]
    pub action: Action,
}

/// `queue add` or `queue status`.
#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Put recordings on the queue, one job each.
    Add(AddArgs),
    /// Where every job stands.
    Status(StatusArgs),
}

/// Arguments of `queue add`.
#[derive(Debug, clap::Args)]
pub struct AddArgs {
    /// The NATS JetStream broker.
    #[arg(long, value_name = "nats://HOST:PORT")]
    pub nats: String,
    /// The recordings: videos, or folders of photos.
    #[arg(required = true, value_name = "RECORDING")]
    pub recordings: Vec<PathBuf>,
    /// The calibration of every recording (default: calibration.json beside each).
    #[arg(long, value_name = "FILE.json")]
    pub calibration: Option<PathBuf>,
    /// More options for `touchmove analyse` (after `--`), the same for every job.
    #[arg(last = true, value_name = "ANALYSE OPTIONS")]
    pub options: Vec<String>,
    /// The broker's credentials.
    #[command(flatten)]
    pub credentials: broker::Credentials,
}

/// Arguments of `queue status`.
#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    /// The NATS JetStream broker.
    #[arg(long, value_name = "nats://HOST:PORT")]
    pub nats: String,
    /// Print every job's state as JSON Lines (the bucket's values) instead of a table.
    #[arg(long)]
    pub json: bool,
    /// The broker's credentials.
    #[command(flatten)]
    pub credentials: broker::Credentials,
}

/// Runs the command.
pub fn run(args: &Args, out: &mut dyn std::io::Write) -> Exit {
    let runtime = match broker::runtime("queue") {
        Ok(runtime) => runtime,
        Err(e) => return Exit::Failed(format!("the broker's thread cannot start: {e}")),
    };
    match &args.action {
        Action::Add(add) => {
            let jobs: Vec<Job> = add
                .recordings
                .iter()
                .map(|recording| {
                    let calibration = add.calibration.clone().unwrap_or_else(|| recording.parent().unwrap_or(std::path::Path::new(".")).join("calibration.json"));
                    Job::new(recording, &calibration, add.options.clone())
                })
                .collect();
            let broker = match runtime.block_on(Broker::connect(&add.nats, &add.credentials, "touchmove queue add")) {
                Ok(broker) => broker,
                Err(e) => return Exit::BadInput(e.to_string()),
            };
            if let Err(e) = runtime.block_on(worker::add(&broker, &jobs)) {
                return Exit::Failed(e.to_string());
            }
            for job in &jobs {
                let _ = writeln!(out, "{}\t{}", job.id, job.recording.display());
            }
            eprintln!("{} jobs on the queue of {}", jobs.len(), add.nats);
            Exit::Ok
        }
        Action::Status(status) => {
            let broker = match runtime.block_on(Broker::connect(&status.nats, &status.credentials, "touchmove queue status")) {
                Ok(broker) => broker,
                Err(e) => return Exit::BadInput(e.to_string()),
            };
            let states = match runtime.block_on(worker::states(&broker)) {
                Ok(states) => states,
                Err(e) => return Exit::Failed(e.to_string()),
            };
            if status.json {
                for state in &states {
                    let _ = writeln!(out, "{}", serde_json::to_string(state).unwrap_or_default());
                }
                return Exit::Ok;
            }
            for state in &states {
                let what = match state.stage {
                    Stage::Waiting => state.error.as_deref().map(|e| format!("after an attempt that failed: {e}")).unwrap_or_default(),
                    Stage::Running => format!("on {}, attempt {}", state.worker.as_deref().unwrap_or("?"), state.attempts),
                    Stage::Done => format!("{} moves, {} rulings in {}", state.moves.unwrap_or(0), state.rulings.unwrap_or(0), state.results.as_ref().map(|p| p.display().to_string()).unwrap_or_default()),
                    Stage::Failed => state.error.clone().unwrap_or_default(),
                };
                let _ = writeln!(out, "{:<8} {:<40} {what}", state.stage.as_str(), state.job.id);
            }
            let count = |stage| states.iter().filter(|s| s.stage == stage).count();
            let _ = writeln!(out, "{} waiting, {} running, {} done, {} failed", count(Stage::Waiting), count(Stage::Running), count(Stage::Done), count(Stage::Failed));
            Exit::Ok
        }
    }
}
