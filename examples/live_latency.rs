//! Measures how soon `live` puts a move out: each rendered clip of a folder is played in real
//! time, as a camera delivers it, through the live pipeline (its lag, frames dropped when
//! behind), and each labelled move is timed to the moment the PGN first shows it (standing or
//! completed) from two moments: the hand letting the piece go (the labels' `made_t`), and the
//! first frame after it on which no hand covers any of the move's squares (the labels' hand
//! cover, at least [`SEEN`] of a square), the first moment a camera overhead can see the move
//! made. Prints each move, then the median and 95th percentile of each, and of the time from the
//! delivery of the frame a move was decided on to its showing (the pipeline behind the camera).
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

/// A square's share under a hand from which the camera does not see what stands on it (as the
/// decoder takes a reading's cover).
const SEEN: f64 = 0.2;

/// The first labelled frame at or after `from` seconds on which none of `squares` is covered.
fn clear_at(frames: &[serde_json::Value], squares: &[String], from: f64) -> Option<f64> {
    frames.iter().filter(|f| f["t"].as_f64().is_some_and(|t| t >= from - 1e-9)).find_map(|f| {
        let covered = |sq: &String| f["covered"][sq.as_str()].as_f64().is_some_and(|c| c >= SEEN);
        (!squares.iter().any(covered)).then(|| f["t"].as_f64().unwrap_or(f64::NAN))
    })
}

/// The squares a move in UCI changes: its two squares, a castling rook's, an en passant pawn's.
fn move_squares(uci: &str, before: &Chess) -> Vec<String> {
    use shakmaty::Position;
    let Ok(m) = uci.parse::<shakmaty::uci::UciMove>() else { return Vec::new() };
    let Ok(mv) = m.to_move(before) else { return Vec::new() };
    let mut after = before.clone();
    after.play_unchecked(mv);
    touchmove::rules::differing(before.board(), after.board()).into_iter().map(|sq| sq.to_string()).collect()
}

fn main() {
    let root = std::env::args().nth(1).expect("usage: live_latency CLIPS_FOLDER");
    let mut dirs: Vec<_> = std::fs::read_dir(&root).expect("a folder of clips").flatten().map(|e| e.path()).filter(|p| p.join("labels.json").is_file()).collect();
    dirs.sort();
    let mut all = Vec::new();
    let mut from_clear = Vec::new();
    let mut behind = Vec::new();
    let mut missed = 0;
    for dir in dirs {
        let labels: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("labels.json")).unwrap()).unwrap();
        let start: Chess = labels["fen"].as_str().unwrap().parse::<shakmaty::fen::Fen>().unwrap().into_position(CastlingMode::Standard).unwrap();
        let frames = labels["frames"].as_array().cloned().unwrap_or_default();
        // Released at `made_t`, per the labels' own engine; in sight once its squares are clear.
        let mut pos = start.clone();
        let mut released: Vec<(String, f64, Option<f64>)> = Vec::new();
        for r in labels["rules"].as_array().into_iter().flatten().filter(|r| r["kind"] == "move") {
            let uci = r["uci"].as_str().unwrap_or_default().to_string();
            let made_t = r["made_t"].as_f64().unwrap_or(f64::NAN);
            let clear = clear_at(&frames, &move_squares(&uci, &pos), made_t);
            if let Some(next) = r["fen"].as_str().and_then(|f| f.parse::<shakmaty::fen::Fen>().ok()).and_then(|f| f.into_position(CastlingMode::Standard).ok()) {
                pos = next;
            }
            released.push((uci, made_t, clear));
        }
        let calibration = Calibration::load(&dir.join("calibration.json")).expect("calibration.json");
        let out = std::env::temp_dir().join(format!("touchmove-live-latency-{}", std::process::id()));
        let model = Path::new(touchmove::detect::DEFAULT_MODEL).to_owned();
        let config = Config { live: true, paced: true, ..Config::offline(Source::File(dir.join("clip.mp4")), calibration, model, start, out.clone()) };
        // Wall-clock moments at which the PGN first showed 1, 2, ... moves, and the latest
        // estimate of when the video's time 0 was delivered (a frame is delivered at its time).
        let mut shown: Vec<(Instant, f64)> = Vec::new();
        let mut origin: Option<Instant> = None;
        pipeline::run(&config, Arc::new(AtomicBool::new(false)), &mut |p| {
            let now = Instant::now();
            let zero = now.checked_sub(std::time::Duration::from_secs_f64(p.t.max(0.0))).unwrap_or(now);
            origin = Some(origin.map_or(zero, |o: Instant| o.min(zero)));
            while shown.len() < p.plies {
                shown.push((now, p.t));
            }
        })
        .expect("the pipeline runs");
        let _ = std::fs::remove_dir_all(&out);
        let origin = origin.expect("frames were read");
        for (i, (uci, made_t, clear)) in released.iter().enumerate() {
            let name = dir.file_name().unwrap().to_string_lossy();
            match shown.get(i) {
                Some((at, decided_t)) => {
                    let out_t = at.duration_since(origin).as_secs_f64();
                    let latency = out_t - made_t;
                    let seen = clear.map_or("its squares never clear".to_string(), |c| format!("{:.0} ms after its squares cleared", (out_t - c) * 1000.0));
                    println!("{name} {uci}: out {:.0} ms after the release, {seen}; decided on the frame of {decided_t:.2} s, out {:.0} ms after it", latency * 1000.0, (out_t - decided_t) * 1000.0);
                    behind.push(out_t - decided_t);
                    all.push(latency);
                    from_clear.extend(clear.map(|c| out_t - c));
                }
                None => {
                    println!("{name} {uci}: never shown");
                    missed += 1;
                }
            }
        }
    }
    let at = |v: &mut Vec<f64>, p: f64| {
        v.sort_by(f64::total_cmp);
        v.get(((v.len() as f64 - 1.0) * p).round() as usize).map_or(f64::NAN, |s| s * 1000.0)
    };
    println!("{} moves shown, {missed} never: median {:.0} ms, 95th percentile {:.0} ms after the hand let go", all.len(), at(&mut all, 0.5), at(&mut all, 0.95));
    println!("each out a median {:.0} ms, 95th percentile {:.0} ms after the frame it was decided on was delivered", at(&mut behind, 0.5), at(&mut behind, 0.95));
    println!("{} with their squares clear: median {:.0} ms, 95th percentile {:.0} ms after no hand covered them", from_clear.len(), at(&mut from_clear, 0.5), at(&mut from_clear, 0.95));
}
