//! An archive analysed on many machines: each recording a job on the broker's work queue
//! ([`crate::broker::JOBS`]), taken by one worker at a time, and its state (waiting, running,
//! done, failed, with the error) in the bucket [`crate::broker::ARCHIVE`], one key per job.
//!
//! A job names its files by path, so they must be where every worker sees them (a shared
//! folder mounted at one path); its results go to the workers' shared results folder, one
//! folder per job named by its id. The id is the recording's folder and name and a hash of the
//! job (the recording, the calibration and the options), so the same job added twice is one.

pub mod worker;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// A job: one recording to analyse.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Job {
    /// Its id: its key in the bucket and its results' folder.
    pub id: String,
    /// The video (or folder of photos), an absolute path.
    pub recording: PathBuf,
    /// The calibration, an absolute path.
    pub calibration: PathBuf,
    /// More `analyse` options (`--fen ...`, `--threads 1`).
    pub options: Vec<String>,
}

/// FNV-1a, 64 bits: a hash that is the same on every machine and in every build.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}

/// `text` with every character a key cannot hold as `_`.
fn key_safe(text: &str) -> String {
    text.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect()
}

impl Job {
    /// The job of analysing `recording` with `calibration` and `options`, paths made absolute.
    pub fn new(recording: &Path, calibration: &Path, options: Vec<String>) -> Job {
        let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_owned());
        let (recording, calibration) = (absolute(recording), absolute(calibration));
        let mut what = format!("{}\n{}", recording.display(), calibration.display());
        options.iter().for_each(|o| what.push_str(&format!("\n{o}")));
        let name = |p: Option<&std::ffi::OsStr>| p.map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let folder = name(recording.parent().and_then(Path::file_name));
        let stem = name(recording.file_stem());
        let id = format!("{}-{:08x}", key_safe(&format!("{folder}-{stem}")).trim_start_matches('-'), fnv(what.as_bytes()) as u32);
        Job { id, recording, calibration, options }
    }

    /// The `analyse` command line of the job, writing into `out`.
    pub fn analyse_args(&self, out: &Path) -> Vec<std::ffi::OsString> {
        let mut args: Vec<std::ffi::OsString> = vec!["analyse".into(), self.recording.clone().into(), "--calibration".into(), self.calibration.clone().into(), "--out".into(), out.into()];
        args.extend(self.options.iter().map(Into::into));
        args
    }
}

/// Where a job stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    /// On the queue.
    Waiting,
    /// Taken by a worker.
    Running,
    /// Its results are written.
    Done,
    /// It cannot be done (the error says why); not retried.
    Failed,
}

impl Stage {
    /// As `queue status` prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Waiting => "waiting",
            Stage::Running => "running",
            Stage::Done => "done",
            Stage::Failed => "failed",
        }
    }
}

/// A job's state, the value of its key in the bucket.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct State {
    /// The job.
    pub job: Job,
    /// Where it stands.
    pub stage: Stage,
    /// The worker that has it or had it last.
    #[serde(default)]
    pub worker: Option<String>,
    /// How many times a worker took it.
    #[serde(default)]
    pub attempts: u64,
    /// Why it failed (or why the last attempt did).
    #[serde(default)]
    pub error: Option<String>,
    /// Done: its results' folder.
    #[serde(default)]
    pub results: Option<PathBuf>,
    /// Done: moves and rulings.
    #[serde(default)]
    pub moves: Option<u64>,
    /// Done: rulings given.
    #[serde(default)]
    pub rulings: Option<u64>,
    /// Done: the game.
    #[serde(default)]
    pub pgn: Option<String>,
    /// Seconds the last attempt took.
    #[serde(default)]
    pub seconds: Option<f64>,
    /// When it last changed, Unix seconds.
    pub at: f64,
}

impl State {
    /// `job`, as just queued.
    pub fn waiting(job: Job) -> State {
        State { job, stage: Stage::Waiting, worker: None, attempts: 0, error: None, results: None, moves: None, rulings: None, pgn: None, seconds: None, at: crate::serve::unix_seconds(std::time::SystemTime::now()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_is_named_by_its_recording_and_what_is_asked() {
        let a = Job::new(Path::new("/archive/round5/board1.mp4"), Path::new("/archive/cal.json"), vec![]);
        assert!(a.id.starts_with("round5-board1-"), "{}", a.id);
        assert_eq!(a, Job::new(Path::new("/archive/round5/board1.mp4"), Path::new("/archive/cal.json"), vec![]), "the same job twice is one");
        let b = Job::new(Path::new("/archive/round5/board1.mp4"), Path::new("/archive/cal.json"), vec!["--fen".into(), "auto".into()]);
        let c = Job::new(Path::new("/archive/round6/board1.mp4"), Path::new("/archive/cal.json"), vec![]);
        assert_ne!(a.id, b.id);
        assert_ne!(a.id, c.id);
        let odd = Job::new(Path::new("/x/a b.c/clip.v1.mp4"), Path::new("/x/c.json"), vec![]);
        assert!(odd.id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'), "{}", odd.id);
        assert_eq!(fnv(b"touchmove"), fnv(b"touchmove"));
        assert_eq!(fnv(b""), 0xcbf2_9ce4_8422_2325);
    }
}
