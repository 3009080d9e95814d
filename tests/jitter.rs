//! The corners' property: every committed rendered clip and game reads the same moves with its
//! board's corners moved at random by up to 1 % of the board's diagonal, as corners marked by
//! hand or found by `calibrate` a few pixels off are. The gate (`scripts/test`) holds what the
//! corners as labelled read; this test holds that a few pixels do not change it.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// Deterministic uniform numbers in 0..1 (xorshift), so a failure is the same every run.
struct Uniform(u64);

impl Uniform {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).unwrap()
}

/// The moves a labelled clip or game holds, in UCI (illegal ones are rulings, not moves).
fn labelled(labels: &Value) -> Vec<String> {
    match labels["moves"].as_array() {
        Some(moves) => moves.iter().filter(|m| m["illegal"] != true).map(|m| m["uci"].as_str().unwrap().to_string()).collect(),
        None => labels["rules"].as_array().unwrap().iter().filter(|r| r["kind"] == "move").map(|r| r["uci"].as_str().unwrap().to_string()).collect(),
    }
}

/// The moves `touchmove eval` put out for the clip named `name` under `out`.
fn predicted(out: &Path, name: &str) -> Vec<String> {
    let text = std::fs::read_to_string(out.join(name).join("rulings.jsonl")).unwrap_or_default();
    text.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()).filter(|r| r["kind"] == "move").map(|r| r["uci"].as_str().unwrap().to_string()).collect()
}

fn eval(dir: &Path, out: &Path) {
    let result = Command::new(env!("CARGO_BIN_EXE_touchmove")).args(["eval", dir.to_str().unwrap(), "--out", out.to_str().unwrap()]).env("RUST_LOG", "error").output().expect("touchmove runs");
    assert!(result.status.success(), "{}", String::from_utf8_lossy(&result.stderr));
}

#[test]
fn every_committed_clip_and_game_reads_the_same_moves_with_its_corners_a_few_pixels_off() {
    let scratch = tempfile::Builder::new().prefix("touchmove-jitter-").tempdir().unwrap();
    let (jittered, out) = (scratch.path().join("clips"), scratch.path().join("out"));
    let mut rng = Uniform(0x5DEE_CE66_D1CE_4E5B);
    let mut clips: Vec<PathBuf> = Vec::new();
    for set in ["fixtures/clips", "fixtures/games"] {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(set).unwrap().map(|e| e.unwrap().path()).filter(|p| p.join("labels.json").is_file()).collect();
        dirs.sort();
        clips.extend(dirs);
    }
    for dir in &clips {
        let mut labels = read_json(&dir.join("labels.json"));
        let corners: Vec<[f64; 2]> = labels["corners"].as_array().unwrap().iter().map(|c| [c[0].as_f64().unwrap(), c[1].as_f64().unwrap()]).collect();
        let diagonal = ((corners[2][0] - corners[0][0]).powi(2) + (corners[2][1] - corners[0][1]).powi(2)).sqrt();
        let moved: Vec<Value> = corners
            .iter()
            .map(|[x, y]| {
                let (r, a) = (0.01 * diagonal * rng.next(), std::f64::consts::TAU * rng.next());
                serde_json::json!([x + r * a.cos(), y + r * a.sin()])
            })
            .collect();
        labels["corners"] = Value::Array(moved);
        let copy = jittered.join(dir.file_name().unwrap());
        std::fs::create_dir_all(&copy).unwrap();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = std::fs::canonicalize(entry.unwrap().path()).unwrap();
            let name = path.file_name().unwrap().to_owned();
            if name != "labels.json" {
                std::os::unix::fs::symlink(&path, copy.join(name)).unwrap();
            }
        }
        std::fs::write(copy.join("labels.json"), labels.to_string()).unwrap();
    }
    eval(&jittered, &out);
    // Where the corners moved read the labelled moves, the property holds (the gate holds the
    // corners as labelled to them); elsewhere they must read what the corners as labelled read.
    let mut differ = Vec::new();
    for dir in &clips {
        let name = dir.file_name().unwrap().to_str().unwrap();
        let got = predicted(&out, name);
        if got != labelled(&read_json(&dir.join("labels.json"))) {
            differ.push((dir.clone(), got));
        }
    }
    // One run reads all of those with their corners as labelled.
    let (as_labelled, labelled_out) = (scratch.path().join("as-labelled"), scratch.path().join("out-as-labelled"));
    for (dir, _) in &differ {
        let alone = as_labelled.join(dir.file_name().unwrap());
        std::fs::create_dir_all(&alone).unwrap();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = std::fs::canonicalize(entry.unwrap().path()).unwrap();
            std::os::unix::fs::symlink(&path, alone.join(path.file_name().unwrap())).unwrap();
        }
    }
    if !differ.is_empty() {
        eval(&as_labelled, &labelled_out);
    }
    for (dir, got) in differ {
        let name = dir.file_name().unwrap().to_str().unwrap();
        assert_eq!(got, predicted(&labelled_out, name), "{name}: the corners moved by up to 1 % of the diagonal read other moves");
    }
}
