//! The load check of `live --serve`, on loopback: each clip of a folder played in real time by
//! the release binary, three ways:
//!
//! 1. alone (`--serve`, no client): the frames dropped without clients;
//! 2. with 200 clients polling `/game.pgn` once a second each (with the ETag, as a broadcast
//!    does) and 50 on `/events`: the frames dropped with them, and how soon each event reaches
//!    each `/events` client after it was decided (its `at`, the wall clock of this machine);
//! 3. with 20 polls a second: the CPU time of the server's threads (named `serve`) over the run,
//!    as a share of one core (measured the same way under the load of 2).
//!
//! Bounded: each run lasts its clip (about 11 s) and a second more.
//!
//! `cargo build --release --locked && cargo run --release --example serve_load -- fixtures/clips`

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The clips played: short, each with a ruling.
const CLIPS: [&str; 4] = ["touch-own-4.3.1", "adjust-undeclared", "released-moved-again-4.7", "two-hands-capture"];

fn main() {
    let root = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "fixtures/clips".into()));
    let binary = PathBuf::from(std::env::var("TOUCHMOVE").unwrap_or_else(|_| "target/release/touchmove".into()));
    assert!(binary.is_file(), "{}: build it first (cargo build --release --locked)", binary.display());
    let (mut alone, mut loaded, mut light) = (0, 0, 0);
    let mut latencies = Vec::new();
    let mut serving = Vec::new();
    let mut serving_busy = Vec::new();
    for name in CLIPS {
        let clip = root.join(name);
        let quiet = play(&binary, &clip, Load::None);
        let busy = play(&binary, &clip, Load::Broadcast);
        let polled = play(&binary, &clip, Load::Polls(20));
        println!(
            "{name}: dropped {} alone, {} with 200 pollers and 50 on /events ({} polls answered, {} events received; latency p95 {:.1} ms; server threads {:.1} % of a core); server threads {:.2} % of a core at 20 polls/s",
            quiet.dropped,
            busy.dropped,
            busy.polls,
            busy.latencies.len(),
            percentile(&busy.latencies, 0.95) * 1000.0,
            busy.serving * 100.0,
            polled.serving * 100.0
        );
        alone += quiet.dropped;
        loaded += busy.dropped;
        light += polled.dropped;
        latencies.extend(busy.latencies);
        serving.push(polled.serving);
        serving_busy.push(busy.serving);
    }
    println!(
        "{} clips: frames dropped {alone} alone, {loaded} with 200 pollers and 50 on /events, {light} at 20 polls/s; event delivery after the decision: median {:.1} ms, p95 {:.1} ms, max {:.1} ms ({} deliveries); server CPU: {:.2} % of one core at 20 polls/s, {:.1} % with 200 pollers and 50 on /events (means over the clips)",
        CLIPS.len(),
        percentile(&latencies, 0.5) * 1000.0,
        percentile(&latencies, 0.95) * 1000.0,
        percentile(&latencies, 1.0) * 1000.0,
        latencies.len(),
        mean(&serving) * 100.0,
        mean(&serving_busy) * 100.0
    );
}

/// The clients on a run.
#[derive(Clone, Copy)]
enum Load {
    None,
    /// 200 pollers of `/game.pgn` once a second each, and 50 clients on `/events`.
    Broadcast,
    /// This many polls of `/game.pgn` a second, from one client.
    Polls(u32),
}

/// What a run measured.
struct Run {
    dropped: u64,
    polls: u64,
    /// Seconds from each event's decision to its arrival, per client.
    latencies: Vec<f64>,
    /// CPU seconds of the server's threads per second of the run.
    serving: f64,
}

fn play(binary: &Path, clip: &Path, load: Load) -> Run {
    let labels: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(clip.join("labels.json")).expect("labels.json")).unwrap();
    let out = std::env::temp_dir().join(format!("touchmove-serve-load-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let declarations = std::env::temp_dir().join(format!("touchmove-serve-load-{}.jsonl", std::process::id()));
    std::fs::write(&declarations, "").unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}");
    let mut child = Command::new(binary)
        .args(["live", "--source", clip.join("clip.mp4").to_str().unwrap(), "--calibration", clip.join("calibration.json").to_str().unwrap()])
        .args(["--fen", labels["fen"].as_str().unwrap(), "--declarations", declarations.to_str().unwrap(), "--min-conf", "0.3"])
        .args(["--out", out.to_str().unwrap(), "--serve", &format!("127.0.0.1:{port}")])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("touchmove runs");
    // stderr: "serving on ...", the token, then "N frames, ... D dropped: ..." when the source ends.
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let ready = Instant::now();
    while agent().get(&format!("{url}/healthz")).call().is_err() {
        assert!(ready.elapsed() < Duration::from_secs(30), "{url} answers");
        std::thread::sleep(Duration::from_millis(20));
    }
    let stop = Arc::new(AtomicBool::new(false));
    let polls = Arc::new(AtomicU64::new(0));
    let latencies = Arc::new(Mutex::new(Vec::new()));
    let mut clients = Vec::new();
    match load {
        Load::None => {}
        Load::Broadcast => {
            for i in 0..200 {
                clients.push(poller(&url, Duration::from_secs(1), Duration::from_millis(i * 5), &stop, &polls));
            }
            for _ in 0..50 {
                clients.push(follower(&url, &stop, &latencies));
            }
        }
        Load::Polls(n) => clients.push(poller(&url, Duration::from_secs(1) / n, Duration::ZERO, &stop, &polls)),
    }
    let started = Instant::now();
    let cpu_before = serve_cpu(child.id());
    let summary = loop {
        let line = rx.recv_timeout(Duration::from_secs(60)).expect("the clip ends within a minute");
        if line.contains(" dropped: ") {
            break line;
        }
    };
    let serving = (serve_cpu(child.id()) - cpu_before) / started.elapsed().as_secs_f64();
    std::thread::sleep(Duration::from_secs(1));
    stop.store(true, Ordering::Relaxed);
    kill(&mut child);
    for c in clients {
        let _ = c.join();
    }
    let _ = std::fs::remove_dir_all(&out);
    // "210 frames, 76 through the model, 0 dropped: 1 moves, 1 rulings"
    let dropped = summary.split(", ").find_map(|p| p.split_once(" dropped:")).and_then(|(n, _)| n.trim().parse().ok()).expect("the run's summary line");
    let latencies = std::mem::take(&mut *latencies.lock().unwrap());
    Run { dropped, polls: polls.load(Ordering::Relaxed), latencies, serving }
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder().timeout_global(Some(Duration::from_secs(5))).http_status_as_error(false).build().into()
}

/// A client polling `/game.pgn` every `every` (after `offset`), with the last ETag.
fn poller(url: &str, every: Duration, offset: Duration, stop: &Arc<AtomicBool>, polls: &Arc<AtomicU64>) -> std::thread::JoinHandle<()> {
    let (url, stop, polls) = (format!("{url}/game.pgn"), stop.clone(), polls.clone());
    std::thread::spawn(move || {
        let agent = agent();
        let mut tag: Option<String> = None;
        std::thread::sleep(offset);
        let mut next = Instant::now();
        while !stop.load(Ordering::Relaxed) {
            let mut request = agent.get(&url);
            if let Some(t) = &tag {
                request = request.header("If-None-Match", t);
            }
            if let Ok(mut response) = request.call() {
                if response.status().as_u16() == 200 {
                    tag = response.headers().get("etag").and_then(|v| v.to_str().ok()).map(str::to_string);
                    let _ = response.body_mut().read_to_string();
                }
                polls.fetch_add(1, Ordering::Relaxed);
            }
            next += every;
            std::thread::sleep(next.saturating_duration_since(Instant::now()));
        }
    })
}

/// A client on `/events`, timing each event from its `at` to its arrival.
fn follower(url: &str, stop: &Arc<AtomicBool>, latencies: &Arc<Mutex<Vec<f64>>>) -> std::thread::JoinHandle<()> {
    let (url, stop, latencies) = (format!("{url}/events"), stop.clone(), latencies.clone());
    std::thread::spawn(move || {
        let agent: ureq::Agent = ureq::Agent::config_builder().timeout_global(Some(Duration::from_secs(120))).build().into();
        let connected = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs_f64();
        let Ok(response) = agent.get(&url).call() else { return };
        for line in BufReader::new(response.into_body().into_reader()).lines().map_while(Result::ok) {
            if stop.load(Ordering::Relaxed) {
                return;
            }
            let Some(data) = line.strip_prefix("data: ") else { continue };
            let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs_f64();
            let event: serde_json::Value = serde_json::from_str(data).unwrap_or_default();
            // Events decided before the client connected are a replay, not a delivery.
            if let Some(at) = event["at"].as_f64().filter(|&at| at >= connected) {
                latencies.lock().unwrap().push(now - at);
            }
            if event["kind"] == "end" {
                return;
            }
        }
    })
}

/// CPU seconds so far of the threads of process `pid` named `serve` (the server's runtime).
fn serve_cpu(pid: u32) -> f64 {
    let ticks: f64 = String::from_utf8(Command::new("getconf").arg("CLK_TCK").output().expect("getconf").stdout).unwrap().trim().parse().unwrap();
    let mut total = 0u64;
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).into_iter().flatten().flatten() {
        let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else { continue };
        // pid (comm) state ... utime stime: fields 14 and 15, counted after the closing parenthesis.
        let Some((head, rest)) = stat.rsplit_once(") ") else { continue };
        if !head.ends_with("(serve") {
            continue;
        }
        let fields: Vec<&str> = rest.split_whitespace().collect();
        total += fields[11].parse::<u64>().unwrap_or(0) + fields[12].parse::<u64>().unwrap_or(0);
    }
    total as f64 / ticks
}

fn kill(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

fn percentile(values: &[f64], p: f64) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v.get(((v.len() as f64 - 1.0) * p).round() as usize).copied().unwrap_or(f64::NAN)
}
