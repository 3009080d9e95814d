//! The fixtures' recordings as an archive through a real `nats-server`, analysed by
//! `touchmove worker`s, each held to one core with `taskset -c N` and its jobs given
//! `--threads 1`:
//!
//! 1. one worker, timed;
//! 2. two workers (cores 0 and 1), timed: the target is at most 0.6x the time of one;
//! 3. two workers, one killed with SIGKILL in the middle of a job and started again 1 s later
//!    (as systemd's `Restart=always` would): every recording must end with exactly one result,
//!    identical (events, rulings, track, PGN) to `touchmove analyse` run on it alone.
//!
//! Recordings: the 35 of `fixtures/`, every clip of `fixtures/clips/` and `fixtures/variants/`
//! and every game photographed a move of `fixtures/games/` (a folder of photos), with the
//! calibration beside it or, where there is none, made from its labelled corners, as
//! `touchmove eval` makes it. The small version is `tests/archive.rs`.
//!
//! ```text
//! cargo build --release --bins --examples
//! target/release/examples/archive_load
//! ```

#[path = "../tests/nats/mod.rs"]
mod nats;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use clap::Parser;
use serde_json::{Value, json};

#[derive(Parser)]
struct Args {
    /// The touchmove binary.
    #[arg(long, default_value = "target/release/touchmove")]
    touchmove: PathBuf,
    /// Seconds a job may go without word from its worker (the killed worker's job waits this
    /// long).
    #[arg(long, default_value_t = 5.0)]
    lease: f64,
    /// Run the workers under `nice -n N` (a negative N, as root, keeps the rest of a shared
    /// machine off their cores).
    #[arg(long, default_value_t = 0, allow_hyphen_values = true)]
    nice: i32,
}

/// A process's CPU seconds so far (user and system), from `/proc`.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat.rsplit(')').next().unwrap_or("").split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The recordings and their calibrations (made in `work` where not beside them).
fn recordings(work: &Path) -> Vec<(PathBuf, PathBuf)> {
    let mut out = Vec::new();
    for root in ["fixtures/clips", "fixtures/variants", "fixtures/games"] {
        for dir in touchmove::cmd::eval::find_clips(&[PathBuf::from(root)]).unwrap() {
            let labels = touchmove::eval::labels::Labels::load(&dir).unwrap();
            let beside = dir.join("calibration.json");
            let calibration = if beside.is_file() {
                beside
            } else {
                let made = work.join(format!("{}-{}.json", root.replace('/', "-"), dir.file_name().unwrap().to_string_lossy()));
                touchmove::cmd::eval::calibration(&labels, &dir).unwrap().save(&made).unwrap();
                made
            };
            out.push((labels.video.clone(), calibration));
        }
    }
    out
}

fn states(touchmove: &Path, url: &str) -> Vec<Value> {
    let out = Command::new(touchmove).args(["queue", "status", "--json", "--nats", url]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

fn worker(args: &Args, url: &str, results: &Path, core: usize, name: &str) -> Running {
    Running(
        Command::new("nice")
            .args(["-n", &args.nice.to_string(), "taskset", "-c", &core.to_string()])
            .arg(&args.touchmove)
            .args(["worker", "--nats", url, "--lease", &args.lease.to_string(), "--name", name, "--results"])
            .arg(results)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    )
}

/// Queues `jobs` on a fresh broker and runs `cores.len()` workers until every job is done or
/// failed; with `kill`, the first worker is killed mid-job and started again a second later.
/// Returns the seconds it took, the workers' CPU seconds (those still running at the end), the
/// jobs' states and the results folder.
fn run(args: &Args, jobs: &[(PathBuf, PathBuf)], cores: &[usize], kill: bool, work: &Path, name: &str) -> (f64, f64, Vec<Value>, PathBuf) {
    let server = nats::NatsServer::start();
    let url = server.url();
    for (video, calibration) in jobs {
        let out = Command::new(&args.touchmove).args(["queue", "add", "--nats", &url]).arg(video).arg("--calibration").arg(calibration).args(["--", "--threads", "1"]).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let results = work.join(name);
    let started = Instant::now();
    let mut workers: Vec<Running> = cores.iter().enumerate().map(|(i, &core)| worker(args, &url, &results, core, &format!("w{i}"))).collect();
    let mut killed = !kill;
    let done = |results: &Path| std::fs::read_dir(results).map_or(0, |d| d.filter_map(|e| e.ok()).filter(|e| !e.file_name().to_string_lossy().starts_with('.')).count());
    loop {
        // Watched through the results folder, which costs the workers' cores nothing; the
        // broker is asked (a `queue status` process) only to find a job to kill, and at the end.
        if killed && done(&results) < jobs.len() {
            std::thread::sleep(Duration::from_millis(50));
            continue;
        }
        let states = states(&args.touchmove, &url);
        if !killed && let Some(job) = states.iter().find(|s| s["stage"] == "running" && s["worker"] == "w0") {
            workers[0].0.kill().unwrap();
            workers[0].0.wait().unwrap();
            eprintln!("{name}: w0 killed with SIGKILL during job {}", job["job"]["id"]);
            std::thread::sleep(Duration::from_secs(1));
            workers[0] = worker(args, &url, &results, cores[0], "w0-again");
            killed = true;
        }
        if killed && states.len() == jobs.len() && states.iter().all(|s| s["stage"] == "done" || s["stage"] == "failed") {
            let cpu = workers.iter().map(|w| cpu_seconds(w.0.id())).sum();
            return (started.elapsed().as_secs_f64(), cpu, states, results);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn main() {
    let args = Args::parse();
    let work = tempfile::tempdir().unwrap();
    let jobs = recordings(work.path());
    eprintln!("{} recordings", jobs.len());
    let (one, one_cpu, _, _) = run(&args, &jobs, &[0], false, work.path(), "one");
    eprintln!("one worker: {one:.1} s, {one_cpu:.1} CPU s");
    let (two, two_cpu, _, _) = run(&args, &jobs, &[0, 1], false, work.path(), "two");
    eprintln!("two workers: {two:.1} s ({:.2}x), {two_cpu:.1} CPU s", two / one);
    let (faulted, _, states, results) = run(&args, &jobs, &[0, 1], true, work.path(), "killed");
    eprintln!("two workers, one killed: {faulted:.1} s");
    // Every recording once, identical to analyse on it alone.
    let folders = std::fs::read_dir(&results).unwrap().filter_map(|e| e.ok()).filter(|e| !e.file_name().to_string_lossy().starts_with('.')).count();
    let mut identical = 0;
    let mut differing = Vec::new();
    for (video, calibration) in &jobs {
        let state = states.iter().find(|s| s["job"]["recording"].as_str() == std::path::absolute(video).ok().as_deref().and_then(Path::to_str)).unwrap();
        let got = PathBuf::from(state["results"].as_str().unwrap_or("-"));
        let alone = work.path().join("alone");
        let _ = std::fs::remove_dir_all(&alone);
        let status = Command::new(&args.touchmove).arg("analyse").arg(video).arg("--calibration").arg(calibration).arg("--out").arg(&alone).args(["--threads", "1"]).stderr(Stdio::null()).status().unwrap();
        assert!(status.success());
        let same = ["events.jsonl", "rulings.jsonl", "track.jsonl", "game.pgn"].iter().all(|f| std::fs::read(got.join(f)).ok() == std::fs::read(alone.join(f)).ok());
        if same { identical += 1 } else { differing.push(video.display().to_string()) }
    }
    let failed = states.iter().filter(|s| s["stage"] == "failed").count();
    let mut seconds: Vec<f64> = states.iter().filter_map(|s| s["seconds"].as_f64()).collect();
    seconds.sort_by(f64::total_cmp);
    println!(
        "{}",
        json!({
            "recordings": jobs.len(),
            "one_worker_s": (one * 10.0).round() / 10.0,
            "two_workers_s": (two * 10.0).round() / 10.0,
            "two_over_one": (two / one * 100.0).round() / 100.0,
            "one_worker_cpu_s": (one_cpu * 10.0).round() / 10.0,
            "two_workers_cpu_s": (two_cpu * 10.0).round() / 10.0,
            "nice": args.nice,
            "killed_run_s": (faulted * 10.0).round() / 10.0,
            "results": folders,
            "job_s_min": seconds.first().map(|s| (s * 10.0).round() / 10.0),
            "job_s_median": seconds.get(seconds.len() / 2).map(|s| (s * 10.0).round() / 10.0),
            "job_s_max": seconds.last().map(|s| (s * 10.0).round() / 10.0),
            "failed": failed,
            "identical_to_analyse": identical,
            "differing": differing,
        })
    );
}
