//! A round of many boards on one machine, through a real `nats-server`: the fixtures' games
//! (`touchmove::publish::replay`) published by N boards at a given pace (each board's game
//! begun at its own moment, as a hall's boards are not in step), gathered by a
//! `touchmove round --nats` process, and measured:
//!
//! - how long each move takes from its board being told it to its being in the round's PGN
//!   (the round server's `/events` sends a record once it is in the PGN), p50, p95, p99, max;
//! - the round server's CPU over the run (its `/proc/PID/stat`), as a share of one core;
//! - whether the round's PGN at the end is the round the same records make with no broker
//!   (identical, byte for byte).
//!
//! With `--kill-broker-at S` the broker is killed with SIGKILL S seconds in and started again
//! on its store 5 s later; with `--cut-board-at S` board 1 reaches the broker through a relay
//! that cuts it off for `--cut-seconds` (30). The small versions of both are `tests/broker.rs`.
//!
//! ```text
//! cargo build --release --bins --examples
//! target/release/examples/round_load --boards 1000 --pace 9 --seconds 120
//! target/release/examples/round_load --boards 1000 --pace 9 --seconds 120 --kill-broker-at 40
//! target/release/examples/round_load --boards 1000 --pace 9 --seconds 120 --cut-board-at 30
//! ```

#[path = "../tests/nats/mod.rs"]
mod nats;

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clap::Parser;
use serde_json::json;
use touchmove::broker::{Broker, Credentials};
use touchmove::pgn::Tags;
use touchmove::publish::replay::{self, Timed};
use touchmove::publish::{Board, Identity, PublishMetrics};

#[derive(Parser)]
struct Args {
    /// Boards in the round.
    #[arg(long, default_value_t = 1000)]
    boards: usize,
    /// Seconds between two plies of a board (a classical game averages about 90).
    #[arg(long, default_value_t = 9.0)]
    pace: f64,
    /// Seconds the round is played for (each board's records up to then).
    #[arg(long, default_value_t = 120.0)]
    seconds: f64,
    /// Kill the broker with SIGKILL this many seconds in; started again on its store 5 s later.
    #[arg(long)]
    kill_broker_at: Option<f64>,
    /// Cut board 1 off from the broker this many seconds in.
    #[arg(long)]
    cut_board_at: Option<f64>,
    /// How long board 1 stays cut off.
    #[arg(long, default_value_t = 30.0)]
    cut_seconds: f64,
    /// Moves told in the first this many seconds are not timed: the records of the games before
    /// the run (each board's game begun at its own moment) all go out at its start.
    #[arg(long, default_value_t = 10.0)]
    warm_up: f64,
    /// The touchmove binary for the round server.
    #[arg(long, default_value = "target/release/touchmove")]
    touchmove: PathBuf,
}

fn now_ns() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos()
}

/// The round server's CPU seconds so far (user and system).
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat.rsplit(')').next().unwrap().split_whitespace().collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    ticks / 100.0
}

/// The `q` quantile of sorted `v`.
fn quantile(v: &[f64], q: f64) -> f64 {
    if v.is_empty() { f64::NAN } else { v[((v.len() - 1) as f64 * q).round() as usize] }
}

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn main() {
    let args = Args::parse();
    let mut server = nats::NatsServer::start();
    let relay = nats::Relay::to(server.port);
    let games = replay::fixture_games(Path::new("fixtures/games"), Path::new("fixtures/clips"), args.pace, 9).expect("the fixture games");
    // Board i plays game i % 3 from a moment of its own: its script shifted so that it starts
    // at -offset (records before 0 are published at once, the position the board had reached).
    let scripts: Vec<(String, Vec<Timed>)> = (0..args.boards)
        .map(|i| {
            let game = &games[i % games.len()];
            let length = game.last().map_or(0.0, |r| r.0);
            let offset = (i as f64 / args.boards as f64) * (length - args.seconds).max(0.0);
            let script: Vec<Timed> = game.iter().filter(|(t, _)| *t - offset < args.seconds).map(|(t, r)| ((t - offset).max(0.0), r.clone())).collect();
            ((i + 1).to_string(), script)
        })
        .collect();
    let records: usize = scripts.iter().map(|s| s.1.len()).sum();
    let borrowed: Vec<(String, &[Timed])> = scripts.iter().map(|(b, s)| (b.clone(), s.as_slice())).collect();
    let tags = Tags::unknown("round load");
    let expected = replay::reference(&borrowed, &tags).pgn().to_string();
    eprintln!("{} boards, {records} records over {} s (a ply every {} s a board), reference round PGN {} bytes", args.boards, args.seconds, args.pace, expected.len());

    let port = nats::free_port();
    let round = Killed(Command::new(&args.touchmove).args(["round", "--nats", &server.url(), "--round", "load", "--serve", &format!("127.0.0.1:{port}")]).stdout(Stdio::null()).stderr(Stdio::inherit()).spawn().expect("the touchmove binary (cargo build --release)"));
    let base = format!("http://127.0.0.1:{port}");
    let agent: ureq::Agent = ureq::Agent::config_builder().timeout_global(Some(Duration::from_secs(30))).http_status_as_error(false).build().into();
    let deadline = Instant::now() + Duration::from_secs(20);
    while agent.get(&format!("{base}/healthz")).call().is_err() {
        assert!(Instant::now() < deadline, "the round server did not start");
        std::thread::sleep(Duration::from_millis(100));
    }

    // Each move's delay, from the board being told it to the round's /events sending it.
    let delays: Arc<Mutex<Vec<f64>>> = Arc::default();
    let timed_from = now_ns() + (args.warm_up * 1e9) as u128;
    {
        let (delays, base) = (delays.clone(), base.clone());
        std::thread::spawn(move || {
            let agent: ureq::Agent = ureq::Agent::config_builder().build().into();
            let mut response = agent.get(&format!("{base}/events")).call().unwrap();
            for line in std::io::BufReader::new(response.body_mut().as_reader()).lines() {
                let Ok(line) = line else { break };
                let Some(data) = line.strip_prefix("data: ") else { continue };
                let record: serde_json::Value = serde_json::from_str(data).unwrap_or_default();
                if record["kind"] == "move"
                    && let Some(told) = record["told_ns"].as_u64()
                    && u128::from(told) >= timed_from
                {
                    delays.lock().unwrap().push((now_ns().saturating_sub(u128::from(told))) as f64 / 1e9);
                }
            }
        });
    }

    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    eprintln!("moves told after {} s are timed", args.warm_up);
    let dir = tempfile::tempdir().unwrap();
    let cpu_start = cpu_seconds(round.0.id());
    let started = Instant::now();
    let left: usize = runtime.block_on(async {
        let url = server.url();
        let mut clients = Vec::new();
        for i in 0..10 {
            clients.push(Broker::connect(&url, &Credentials::default(), &format!("load {i}")).await.unwrap());
        }
        let cut_client = Broker::connect(&relay.url(), &Credentials::default(), "load, board 1").await.unwrap();
        let mut playing = Vec::new();
        for (i, (id, script)) in scripts.iter().enumerate() {
            let broker = if i == 0 && args.cut_board_at.is_some() { cut_client.clone() } else { clients[i % clients.len()].clone() };
            let home = dir.path().join(id);
            std::fs::create_dir_all(&home).unwrap();
            let (id, script, tags) = (id.clone(), script.clone(), tags.clone());
            playing.push(tokio::spawn(async move {
                let board = Board::start(broker, Identity::new("load", &id, tags), &home.join("outbox.jsonl"), 100_000, &home, PublishMetrics::default()).await.unwrap();
                replay::play(board, &script, 1.0, 60.0).await
            }));
        }
        if let Some(at) = args.kill_broker_at {
            tokio::time::sleep_until(tokio::time::Instant::from_std(started + Duration::from_secs_f64(at))).await;
            server.kill9();
            eprintln!("{:.1} s: the broker killed with SIGKILL", started.elapsed().as_secs_f64());
            tokio::time::sleep(Duration::from_secs(5)).await;
            server.restart();
            eprintln!("{:.1} s: the broker started again on its store", started.elapsed().as_secs_f64());
        }
        if let Some(at) = args.cut_board_at {
            tokio::time::sleep_until(tokio::time::Instant::from_std(started + Duration::from_secs_f64(at))).await;
            relay.cut();
            eprintln!("{:.1} s: board 1 cut off from the broker", started.elapsed().as_secs_f64());
            tokio::time::sleep(Duration::from_secs_f64(args.cut_seconds)).await;
            relay.restore();
            eprintln!("{:.1} s: board 1 let back", started.elapsed().as_secs_f64());
        }
        let mut left = 0;
        for p in playing {
            left += p.await.unwrap();
        }
        left
    });
    let played = started.elapsed().as_secs_f64();
    let cpu = cpu_seconds(round.0.id()) - cpu_start;
    // The end: the round's PGN is the reference, or is not.
    let deadline = Instant::now() + Duration::from_secs(60);
    let identical = loop {
        let text = agent.get(&format!("{base}/round.pgn")).call().ok().and_then(|mut r| r.body_mut().read_to_string().ok()).unwrap_or_default();
        if text == expected {
            break true;
        }
        if Instant::now() > deadline {
            std::fs::write("/tmp/round_load-got.pgn", &text).unwrap();
            std::fs::write("/tmp/round_load-expected.pgn", &expected).unwrap();
            break false;
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    let mut delays = delays.lock().unwrap().clone();
    delays.sort_by(f64::total_cmp);
    let metrics = agent.get(&format!("{base}/metrics")).call().ok().and_then(|mut r| r.body_mut().read_to_string().ok()).unwrap_or_default();
    let metric = |name: &str| metrics.lines().find_map(|l| l.strip_prefix(name).and_then(|v| v.strip_prefix(' '))).unwrap_or("?").to_string();
    println!(
        "{}",
        json!({
            "boards": args.boards,
            "pace_s": args.pace,
            "records": records,
            "played_s": (played * 10.0).round() / 10.0,
            "unsent": left,
            "moves_timed": delays.len(),
            "delay_p50_ms": (quantile(&delays, 0.5) * 1000.0).round(),
            "delay_p95_ms": (quantile(&delays, 0.95) * 1000.0).round(),
            "delay_p99_ms": (quantile(&delays, 0.99) * 1000.0).round(),
            "delay_max_ms": (delays.last().copied().unwrap_or(f64::NAN) * 1000.0).round(),
            "round_cpu_share_of_a_core": (cpu / played * 1000.0).round() / 1000.0,
            "records_taken": metric("touchmove_round_records_taken_total"),
            "records_repeated": metric("touchmove_round_records_repeated_total"),
            "identical_to_the_round_without_broker": identical,
            "kill_broker_at": args.kill_broker_at,
            "cut_board_at": args.cut_board_at,
        })
    );
    if !identical {
        eprintln!("the round's PGN differs: /tmp/round_load-got.pgn against /tmp/round_load-expected.pgn");
        std::process::exit(1);
    }
}
