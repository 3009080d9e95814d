//! `touchmove worker`: analyses the archive's jobs from the broker's work queue, one at a time,
//! with the same code as `touchmove analyse` (in this process), into a shared results folder.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser as _;

use super::Exit;
use super::monitor::interrupt_flag;
use crate::archive::Job;
use crate::archive::worker::{Failure, Worker};
use crate::broker::{self, Broker};

/// Arguments of `touchmove worker`.
#[derive(Debug, clap::Args)]
#[command(
    about = "Analyse the archive's jobs from the broker's work queue, one at a time",
    long_about = "Takes the jobs `touchmove queue add` put on the broker one at a time, and runs each as \
`touchmove analyse` would (the same code, in this process) into RESULTS/.ID.NAME.partial, renamed to \
RESULTS/ID once every file is written; the job is then recorded done (moves, rulings, the game) and only then \
acknowledged. Run one on every machine that should help, all with the same shared RESULTS folder and the \
archive's files at the same paths.\n\n\
While a job runs the worker tells the broker so every third of --lease; a worker that dies (a crash, a \
kill -9, a machine lost) stops telling, and the job goes to another worker once the lease runs out. A job \
that cannot be done (a file missing, not a video, a bad option) fails at once, with the error in `queue \
status`, and is not retried; one that fails otherwise is tried 3 times. Ctrl-C puts the job at hand back on \
the queue and stops.\n\n\
A worker uses the cores its analysis is given (analyse's --threads, 2 by default, as a job option after \
`--` in `queue add`); to hold it to a share of the machine, start it under `taskset -c CPUS` or a systemd \
unit's CPUAffinity= / CPUQuota=.\n\n\
Exit codes: 0 stopped with Ctrl-C, 1 a failure on the broker, 2 bad arguments or a broker that cannot be \
reached or refuses the credentials.",
    after_help = "Examples:\n  touchmove worker --nats nats://broker:4222 --results /archive/results\n  \
taskset -c 0 touchmove worker --nats nats://broker:4222 --results /archive/results --name hall-pc-1"
)]
pub struct Args {
    /// The NATS JetStream broker.
    #[arg(long, value_name = "nats://HOST:PORT")]
    pub nats: String,
    /// The shared results folder: one folder per job, named by its id.
    #[arg(long, value_name = "DIR")]
    pub results: PathBuf,
    /// This worker's name in `queue status` (default: the machine's name and the process id).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Seconds a job may go without word from its worker before another takes it (set when the
    /// queue's consumer is first made).
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0)]
    pub lease: f64,
    /// The broker's credentials.
    #[command(flatten)]
    pub credentials: broker::Credentials,
}

/// `touchmove analyse`'s arguments, parsed from a job.
#[derive(clap::Parser)]
#[command(name = "touchmove")]
struct AnalyseLine {
    #[command(subcommand)]
    analyse: AnalyseCommand,
}

#[derive(clap::Subcommand)]
enum AnalyseCommand {
    Analyse(super::analyse::Args),
}

/// Runs `job` as `touchmove analyse` would, into `out`.
fn analyse(job: &Job, out: &std::path::Path) -> Result<(), Failure> {
    let line = AnalyseLine::try_parse_from(std::iter::once("touchmove".into()).chain(job.analyse_args(out))).map_err(|e| Failure::BadInput(format!("the job's options: {}", e.to_string().lines().next().unwrap_or(""))))?;
    let AnalyseCommand::Analyse(args) = line.analyse;
    let interrupted = interrupt_flag();
    match super::analyse::run(&args) {
        Exit::Ok if interrupted.load(std::sync::atomic::Ordering::Relaxed) => Err(Failure::Interrupted),
        Exit::Ok => Ok(()),
        Exit::BadInput(e) => Err(Failure::BadInput(e)),
        Exit::Failed(e) => Err(Failure::Failed(e)),
    }
}

/// Runs the worker until Ctrl-C.
pub fn run(args: &Args) -> Exit {
    if !(1.0..=3600.0).contains(&args.lease) {
        return Exit::BadInput(format!("--lease {}: must be between 1 and 3600 seconds", args.lease));
    }
    let name = args.name.clone().unwrap_or_else(|| format!("{}-{}", std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default().trim(), std::process::id()));
    let runtime = match broker::runtime("worker") {
        Ok(runtime) => runtime,
        Err(e) => return Exit::Failed(format!("the broker's thread cannot start: {e}")),
    };
    let broker = match runtime.block_on(Broker::connect(&args.nats, &args.credentials, &format!("touchmove worker {name}"))) {
        Ok(broker) => broker,
        Err(e) => return Exit::BadInput(e.to_string()),
    };
    let worker = Worker { name: name.clone(), results: args.results.clone(), lease: Duration::from_secs_f64(args.lease), stop: interrupt_flag(), analyse: Arc::new(analyse) };
    eprintln!("worker {name}: taking jobs from {} into {}", args.nats, args.results.display());
    match runtime.block_on(worker.run(&broker)) {
        Ok(()) => Exit::Ok,
        Err(e) => Exit::Failed(e.to_string()),
    }
}
