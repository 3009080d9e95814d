//! `touchmove eval` end to end: predictions built from fixture clips' own labels score perfect;
//! a copy with one event dropped and one ruling added scores exactly that; the gate and bad
//! input give their exit codes.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};

const CLIPS: [&str; 2] = ["fixtures/clips/touch-own-4.3.1", "fixtures/clips/two-hands-castling"];

fn labels(clip: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(Path::new(clip).join("labels.json")).unwrap()).unwrap()
}

fn jsonl(values: &[Value]) -> String {
    values.iter().map(|v| v.to_string() + "\n").collect()
}

/// Writes what a perfect pipeline would output for `clip` under `root/NAME/`, after `corrupt`
/// has had its way with the events and records.
fn predictions(root: &Path, clip: &str, corrupt: impl Fn(&mut Vec<Value>, &mut Vec<Value>)) {
    let l = labels(clip);
    let dir = root.join(Path::new(clip).file_name().unwrap());
    std::fs::create_dir_all(&dir).unwrap();
    let mut events: Vec<Value> = l["events"].as_array().unwrap().clone();
    let mut records: Vec<Value> = l["rules"].as_array().unwrap().clone();
    corrupt(&mut events, &mut records);
    let track: Vec<Value> = l["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| json!({"frame": f["frame"], "t": f["t"], "board": f["pieces"], "hands": f["hands_over_board"]}))
        .collect();
    let fps = l["fps"].as_f64().unwrap();
    let frames = l["n_frames"].as_u64().unwrap();
    let summary = json!({"frames": frames, "analysed": frames, "seconds": 2.0, "video_seconds": frames as f64 / fps});
    std::fs::write(dir.join("events.jsonl"), jsonl(&events)).unwrap();
    std::fs::write(dir.join("rulings.jsonl"), jsonl(&records)).unwrap();
    std::fs::write(dir.join("track.jsonl"), jsonl(&track)).unwrap();
    std::fs::write(dir.join("summary.json"), summary.to_string()).unwrap();
}

/// A scratch folder, removed when dropped.
fn tmp(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new().prefix(&format!("touchmove-eval-{name}-")).tempdir().unwrap()
}

fn eval(dir: &Path, extra: &[&str]) -> (Output, Value) {
    let report = dir.join("report.json");
    let out = Command::new(env!("CARGO_BIN_EXE_touchmove"))
        .args(["eval", CLIPS[0], CLIPS[1], "--predictions"])
        .arg(dir.join("pred"))
        .arg("--json")
        .arg(&report)
        .args(extra)
        .output()
        .expect("touchmove runs");
    let json = std::fs::read_to_string(&report).map(|t| serde_json::from_str(&t).unwrap()).unwrap_or(Value::Null);
    (out, json)
}

fn total(report: &Value, metric: &str) -> Value {
    report["total"]["metrics"][metric]["value"].clone()
}

const GATE: &str = r#"{"format":"touchmove-eval-thresholds/1",
  "min":{"events.precision":1,"events.recall":1,"moves.exact_clips":1,"moves.in_window":1,"hands_per_move.accuracy":1,
         "rulings.precision":1,"rulings.recall":1,"frames.square_accuracy":1,"frames.board_accuracy":1,"frames.hand_accuracy":1},
  "max":{"rulings.false_accusations":0}}"#;

#[test]
fn the_labels_own_predictions_score_perfect_and_pass_a_perfect_gate() {
    let scratch = tmp("perfect");
    let dir = scratch.path();
    for clip in CLIPS {
        predictions(&dir.join("pred"), clip, |_, _| {});
    }
    std::fs::write(dir.join("gate.json"), GATE).unwrap();
    let plots = dir.join("plots");
    let (out, report) = eval(dir, &["--thresholds", dir.join("gate.json").to_str().unwrap(), "--plots", plots.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    for metric in ["events.precision", "events.recall", "moves.exact_clips", "moves.plies", "moves.in_window", "hands_per_move.accuracy"] {
        assert_eq!(total(&report, metric), json!(1.0), "{metric}");
    }
    for metric in ["rulings.precision", "rulings.recall", "frames.square_accuracy", "frames.board_accuracy", "frames.hand_accuracy"] {
        assert_eq!(total(&report, metric), json!(1.0), "{metric}");
    }
    assert_eq!(total(&report, "rulings.false_accusations"), json!(0.0));
    assert_eq!(total(&report, "speed.realtime_factor"), json!((210.0 / 20.0 * 2.0) / 4.0));
    assert_eq!(report["thresholds"]["passed"], json!(true));
    assert!(stdout.contains("## touch-own-4.3.1") && stdout.contains("## Total (2 clips)") && stdout.contains("±5 frames"), "{stdout}");
    for clip in CLIPS {
        let png = std::fs::read(plots.join(format!("{}.png", Path::new(clip).file_name().unwrap().to_str().unwrap()))).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    }
}

#[test]
fn one_dropped_event_and_one_extra_ruling_score_exactly_that() {
    let scratch = tmp("corrupt");
    let dir = scratch.path();
    // touch-own-4.3.1: its first event (the touch of g1) dropped, a 4.3.2 violation added.
    predictions(&dir.join("pred"), CLIPS[0], |events, records| {
        events.remove(0);
        records.push(json!({"t": 2.0, "kind": "ruling", "verdict": "violation", "article": "4.3.2", "side": "w",
                            "required": [], "text": "made up", "evidence": []}));
    });
    predictions(&dir.join("pred"), CLIPS[1], |_, _| {});
    std::fs::write(dir.join("gate.json"), GATE).unwrap();
    let (out, report) = eval(dir, &["--thresholds", dir.join("gate.json").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    // Scored events: touch, lift, release in the first clip; two lifts and two releases in the other.
    assert_eq!(total(&report, "events.recall"), json!(6.0 / 7.0));
    assert_eq!(total(&report, "events.precision"), json!(1.0));
    assert_eq!(total(&report, "events.touch.recall"), json!(0.0));
    assert_eq!(total(&report, "events.touch.precision"), Value::Null);
    assert_eq!(total(&report, "rulings.recall"), json!(1.0));
    assert_eq!(total(&report, "rulings.precision"), json!(2.0 / 3.0));
    assert_eq!(total(&report, "rulings.4.3.2.precision"), json!(0.0));
    assert_eq!(total(&report, "rulings.4.3.2.recall"), Value::Null);
    assert_eq!(total(&report, "rulings.false_accusations"), json!(1.0));
    // The same hand still lifted and released the bishop: the hand count is unchanged.
    assert_eq!(total(&report, "hands_per_move.accuracy"), json!(1.0));
    assert_eq!(total(&report, "moves.exact_clips"), json!(1.0));
    let failures: Vec<&str> = report["thresholds"]["failures"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
    assert_eq!(failures.len(), 3, "{failures:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("3 threshold(s) not met"));
}

#[test]
fn bad_input_exits_2_naming_the_file() {
    let scratch = tmp("bad");
    let dir = scratch.path();
    predictions(&dir.join("pred"), CLIPS[0], |_, _| {});
    // No predictions at all for the second clip.
    let (out, _) = eval(dir, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("two-hands-castling: no predictions"));
    // A malformed line names the file and line.
    predictions(&dir.join("pred"), CLIPS[1], |events, _| events[1] = json!({"t": 1.0, "ev": "lift", "hand": "w1", "frame": 20}));
    let (out, _) = eval(dir, &[]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("two-hands-castling/events.jsonl:2: field `sq`"), "{stderr}");
}
