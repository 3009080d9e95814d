//! Measures how soon `live` puts a move out: each rendered clip of a folder is played in real
//! time, as a camera delivers it, through the live pipeline (its lag, frames dropped when
//! behind), and each labelled move is timed from the moment the hand let the piece go (the
//! labels' `made_t`) to the moment the PGN first shows it (standing or completed). Prints each
//! move, then the median and 95th percentile.
//!
//! `cargo run --release --example live_latency -- fixtures/clips`

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use shakmaty::{CastlingMode, Chess};
use touchmove::board::Calibration;
use touchmove::capture::Source;
use touchmove::pipeline::{self, Config};

fn main() {
    let root = std::env::args().nth(1).expect("usage: live_latency CLIPS_FOLDER");
    let mut dirs: Vec<_> = std::fs::read_dir(&root).expect("a folder of clips").flatten().map(|e| e.path()).filter(|p| p.join("labels.json").is_file()).collect();
    dirs.sort();
    let mut all = Vec::new();
    let mut missed = 0;
    for dir in dirs {
        let labels: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("labels.json")).unwrap()).unwrap();
        // Released at `made_t`, per the labels' own engine.
        let released: Vec<(String, f64)> = labels["rules"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| r["kind"] == "move")
            .map(|r| (r["uci"].as_str().unwrap_or_default().to_string(), r["made_t"].as_f64().unwrap_or(f64::NAN)))
            .collect();
        let start: Chess = labels["fen"].as_str().unwrap().parse::<shakmaty::fen::Fen>().unwrap().into_position(CastlingMode::Standard).unwrap();
        let calibration = Calibration::load(&dir.join("calibration.json")).expect("calibration.json");
        let out = std::env::temp_dir().join(format!("touchmove-live-latency-{}", std::process::id()));
        let model = Path::new(touchmove::detect::DEFAULT_MODEL).to_owned();
        let config = Config { live: true, paced: true, ..Config::offline(Source::File(dir.join("clip.mp4")), calibration, model, start, out.clone()) };
        // Wall-clock moments at which the PGN first showed 1, 2, ... moves, and the latest
        // estimate of when the video's time 0 was delivered (a frame is delivered at its time).
        let mut shown: Vec<Instant> = Vec::new();
        let mut origin: Option<Instant> = None;
        pipeline::run(&config, Arc::new(AtomicBool::new(false)), &mut |p| {
            let now = Instant::now();
            let zero = now.checked_sub(std::time::Duration::from_secs_f64(p.t.max(0.0))).unwrap_or(now);
            origin = Some(origin.map_or(zero, |o: Instant| o.min(zero)));
            while shown.len() < p.plies {
                shown.push(now);
            }
        })
        .expect("the pipeline runs");
        let _ = std::fs::remove_dir_all(&out);
        let origin = origin.expect("frames were read");
        for (i, (uci, made_t)) in released.iter().enumerate() {
            let name = dir.file_name().unwrap().to_string_lossy();
            match shown.get(i) {
                Some(at) => {
                    let latency = at.duration_since(origin).as_secs_f64() - made_t;
                    println!("{name} {uci}: out {:.0} ms after the release", latency * 1000.0);
                    all.push(latency);
                }
                None => {
                    println!("{name} {uci}: never shown");
                    missed += 1;
                }
            }
        }
    }
    all.sort_by(f64::total_cmp);
    let at = |p: f64| all.get(((all.len() as f64 - 1.0) * p).round() as usize).map_or(f64::NAN, |s| s * 1000.0);
    println!("{} moves shown, {missed} never: median {:.0} ms, 95th percentile {:.0} ms after the hand let go", all.len(), at(0.5), at(0.95));
}
