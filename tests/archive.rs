//! An archive spread over workers, against a real `nats-server` on loopback: four fixture clips,
//! a file that does not exist and one that is not a video put on the queue; two `touchmove
//! worker`s take them, and one is killed with SIGKILL in the middle of a job. Every clip ends
//! with exactly one result, identical to `touchmove analyse` on it; the two bad jobs fail at once
//! with their error in `queue status`, tried once. (The whole of `fixtures/` on two workers, and
//! the time it takes, is `examples/archive_load.rs`.)

mod nats;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nats::NatsServer;
use serde_json::Value;

const CLIPS: [&str; 4] = ["touch-own-4.3.1", "clean-castling", "knocked-piece", "two-hands-capture"];

fn touchmove() -> Command {
    Command::new(env!("CARGO_BIN_EXE_touchmove"))
}

/// A process killed when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn worker(url: &str, results: &Path, name: &str) -> Running {
    Running(touchmove().args(["worker", "--nats", url, "--lease", "3", "--name", name, "--results"]).arg(results).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap())
}

/// Every job's state.
fn status(url: &str) -> Vec<Value> {
    let out = touchmove().args(["queue", "status", "--json", "--nats", url]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn add(url: &str, files: &[PathBuf], calibration: Option<&Path>) {
    let mut command = touchmove();
    command.args(["queue", "add", "--nats", url]).args(files);
    if let Some(c) = calibration {
        command.arg("--calibration").arg(c);
    }
    let out = command.args(["--", "--threads", "1"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn workers_share_the_archive_and_a_worker_killed_mid_job_loses_nothing() {
    let server = NatsServer::start();
    let url = server.url();
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let clips: Vec<PathBuf> = CLIPS.iter().map(|c| Path::new("fixtures/clips").join(c).join("clip.mp4")).collect();
    add(&url, &clips, None);
    add(&url, &[dir.path().join("gone/clip.mp4")], Some(Path::new("fixtures/clips/touch-own-4.3.1/calibration.json")));
    add(&url, &[PathBuf::from("fixtures/clips/touch-own-4.3.1/events.jsonl")], Some(Path::new("fixtures/clips/touch-own-4.3.1/calibration.json")));
    assert_eq!(status(&url).len(), 6);
    assert!(status(&url).iter().all(|s| s["stage"] == "waiting"));

    let mut doomed = Some(worker(&url, &results, "a"));
    let _b = worker(&url, &results, "b");
    let deadline = Instant::now() + Duration::from_secs(180);
    let mut killed_on = None;
    let states = loop {
        let states = status(&url);
        if killed_on.is_none()
            && let Some(job) = states.iter().find(|s| s["stage"] == "running" && s["worker"] == "a" && s["job"]["recording"].as_str().unwrap().ends_with("clip.mp4"))
        {
            // In the middle of a job: killed without a word to the broker.
            drop(doomed.take());
            killed_on = Some(job["job"]["id"].as_str().unwrap().to_string());
        }
        if killed_on.is_some() && states.iter().all(|s| s["stage"] == "done" || s["stage"] == "failed") {
            break states;
        }
        assert!(Instant::now() < deadline, "the archive did not finish: {states:#?}");
        std::thread::sleep(Duration::from_millis(100));
    };
    let killed_on = killed_on.unwrap();
    let killed = states.iter().find(|s| s["job"]["id"] == killed_on.as_str()).unwrap();
    assert_eq!(killed["stage"], "done", "{killed}");
    assert_eq!(killed["worker"], "b", "the other worker took the job the killed one held");
    assert!(killed["attempts"].as_u64().unwrap() >= 2);

    let failed: Vec<&Value> = states.iter().filter(|s| s["stage"] == "failed").collect();
    assert_eq!(failed.len(), 2, "{failed:#?}");
    for f in &failed {
        let error = f["error"].as_str().unwrap();
        let recording = f["job"]["recording"].as_str().unwrap();
        assert!(error.contains(recording), "the error names the file: {error}");
        assert_eq!(f["attempts"], 1, "a job that cannot be done is not retried: {f}");
    }

    // One result per clip, each what `analyse` gives.
    let done: Vec<String> = std::fs::read_dir(&results).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).filter(|n| !n.starts_with('.')).collect();
    assert_eq!(done.len(), CLIPS.len(), "{done:?}");
    for (clip, video) in CLIPS.iter().zip(&clips) {
        let state = states.iter().find(|s| s["job"]["recording"].as_str().unwrap().ends_with(&format!("{clip}/clip.mp4"))).unwrap();
        let got = PathBuf::from(state["results"].as_str().unwrap());
        let alone = dir.path().join(format!("alone-{clip}"));
        let out = touchmove().arg("analyse").arg(video).arg("--calibration").arg(video.with_file_name("calibration.json")).arg("--out").arg(&alone).args(["--threads", "1"]).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        for file in ["events.jsonl", "rulings.jsonl", "track.jsonl", "game.pgn"] {
            assert_eq!(std::fs::read_to_string(got.join(file)).unwrap(), std::fs::read_to_string(alone.join(file)).unwrap(), "{clip}: {file}");
        }
        assert_eq!(state["pgn"].as_str().unwrap(), std::fs::read_to_string(alone.join("game.pgn")).unwrap());
    }
}
