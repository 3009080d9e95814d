//! `touchmove analyse` on a series of photos, as a camera taking two stills a second gives them:
//! every tenth frame of a rendered fixture clip (20 fps) written as a JPEG, with its EXIF
//! capture time or without, read as a folder or through a glob; and the photos that cannot be
//! read. Needs ONNX Runtime (see scripts/setup), as `tests/analyse.rs` does.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use opencv::core::Mat;
use opencv::prelude::*;
use opencv::videoio;

const CLIP: &str = "fixtures/clips/clean-castling";

/// Writes every tenth frame of the clip into `dir` as `img0.jpg`, `img10.jpg`, ... (in name
/// order `img100` comes before `img20`: the natural order must be used), each with its EXIF
/// capture time (the frame's time in the clip) when `timed`.
fn stills(dir: &Path, timed: bool) -> usize {
    std::fs::create_dir_all(dir).unwrap();
    let mut cap = videoio::VideoCapture::from_file(format!("{CLIP}/clip.mp4").as_str(), videoio::CAP_ANY).unwrap();
    let (mut frame, mut index, mut written) = (Mat::default(), 0, 0);
    while cap.read(&mut frame).unwrap() && !frame.empty() {
        if index % 10 == 0 {
            let seconds = f64::from(index) / 20.0;
            let exif = timed.then(|| exif(seconds));
            std::fs::write(dir.join(format!("img{index}.jpg")), jpeg(&frame, exif)).unwrap();
            written += 1;
        }
        index += 1;
    }
    written
}

/// EXIF data (TIFF bytes) saying the photo was taken `seconds` after 17:40:00 on 2 December 2026.
fn exif(seconds: f64) -> Vec<u8> {
    use exif::{Field, In, Tag, Value};
    let whole = seconds.floor() as u32;
    let time = format!("2026:12:02 17:{:02}:{:02}", 40 + whole / 60, whole % 60);
    let hundredths = format!("{:02}", ((seconds - f64::from(whole)) * 100.0).round() as u32);
    let fields = [
        Field { tag: Tag::DateTimeOriginal, ifd_num: In::PRIMARY, value: Value::Ascii(vec![time.into_bytes()]) },
        Field { tag: Tag::SubSecTimeOriginal, ifd_num: In::PRIMARY, value: Value::Ascii(vec![hundredths.into_bytes()]) },
    ];
    let mut writer = exif::experimental::Writer::new();
    for field in &fields {
        writer.push_field(field);
    }
    let mut tiff = std::io::Cursor::new(Vec::new());
    writer.write(&mut tiff, false).unwrap();
    tiff.into_inner()
}

/// A BGR frame as a JPEG (libjpeg through OpenCV, as most cameras' encoders), with an APP1
/// segment of EXIF data where given, as cameras write it.
fn jpeg(frame: &Mat, exif: Option<Vec<u8>>) -> Vec<u8> {
    let mut encoded = opencv::core::Vector::<u8>::new();
    opencv::imgcodecs::imencode(".jpg", frame, &mut encoded, &opencv::core::Vector::new()).unwrap();
    let mut jpeg = encoded.to_vec();
    if let Some(tiff) = exif {
        let mut app1 = vec![0xFF, 0xE1];
        app1.extend_from_slice(&u16::try_from(2 + 6 + tiff.len()).unwrap().to_be_bytes());
        app1.extend_from_slice(b"Exif\0\0");
        app1.extend_from_slice(&tiff);
        jpeg.splice(2..2, app1);
    }
    jpeg
}

/// Runs `analyse` on `recording` into `out`, with the clip's calibration and start position.
fn analyse(recording: &str, out: &Path) -> Output {
    let labels: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(format!("{CLIP}/labels.json")).unwrap()).unwrap();
    Command::new(env!("CARGO_BIN_EXE_touchmove"))
        .args(["analyse", recording, "--calibration", &format!("{CLIP}/calibration.json")])
        .args(["--fen", labels["fen"].as_str().unwrap(), "--out", out.to_str().unwrap()])
        .output()
        .expect("touchmove runs")
}

/// The records of `rulings.jsonl` in `out`.
fn records(out: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(out.join("rulings.jsonl")).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The moves (UCI) and when each was completed.
fn moves(records: &[serde_json::Value]) -> Vec<(String, f64)> {
    records.iter().filter(|r| r["kind"] == "move").map(|r| (r["uci"].as_str().unwrap().into(), r["made_t"].as_f64().unwrap())).collect()
}

/// A folder removed when done with, unless a test failed (it is kept to look at).
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

fn scratch(name: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("touchmove-stills-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    Scratch(dir)
}

#[test]
fn two_stills_a_second_give_whites_castling_timed_by_exif_or_by_their_order() {
    let root = scratch("game");
    let duration = 217.0 / 20.0;

    // A folder of photos with their capture times: both castlings, as the video gives them, at
    // the photos' times (at two photos a second the king's and the rook's flights fall between
    // photos: the decoder reads the moves from the positions).
    let timed = root.0.join("timed");
    assert_eq!(stills(&timed, true), 22);
    let out = root.0.join("out-timed");
    let run = analyse(timed.to_str().unwrap(), &out);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let timed_records = records(&out);
    let read = moves(&timed_records);
    assert_eq!(read.iter().map(|m| m.0.as_str()).collect::<Vec<_>>(), ["e1g1", "e8c8"], "{read:?}");
    assert!(read.iter().all(|m| m.1 > 0.0 && m.1 <= duration && (m.1 * 2.0).fract() == 0.0), "timed by EXIF, half a second a photo: {read:?}");
    // A clean move, never a breach claimed for sure: at two photos a second a hand is in one
    // photo and gone from the next, so whose hand it was may be left to the arbiter.
    assert!(timed_records.iter().all(|r| r["kind"] != "ruling" || r["verdict"] == "judgement"), "{timed_records:?}");
    for file in ["events.jsonl", "track.jsonl", "game.pgn", "summary.json"] {
        assert!(out.join(file).is_file(), "{file}");
    }
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["frames"], 22, "{summary}");

    // The same photos without EXIF, the first taken twice, through a glob that leaves out a
    // note beside them: the same moves, a second a photo.
    let untimed = root.0.join("untimed");
    stills(&untimed, false);
    std::fs::copy(untimed.join("img0.jpg"), untimed.join("img5.jpg")).unwrap();
    std::fs::write(untimed.join("notes.txt"), "board 3, round 5").unwrap();
    let out = root.0.join("out-untimed");
    let run = analyse(&format!("{}/*.jpg", untimed.display()), &out);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let by_order = moves(&records(&out));
    assert_eq!(by_order.iter().map(|m| m.0.as_str()).collect::<Vec<_>>(), ["e1g1", "e8c8"], "{by_order:?}");
    assert!(by_order.iter().all(|m| m.1.fract() == 0.0 && m.1 <= 22.0), "timed by order, a second a photo: {by_order:?}");
    // Every photo is read: one is taken because something happened (a board alike in two
    // photos, or a dark piece moved between dark squares, is no reason to pass one over).
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["analysed"], 23, "{summary}");
}

#[test]
fn a_file_that_is_not_a_photo_stops_the_analysis_there_and_keeps_what_was_decided() {
    let root = scratch("bad");
    let dir = root.0.join("photos");
    stills(&dir, true);
    // Between img120 and img130: frame 13, after White's castling.
    std::fs::write(dir.join("img125.jpg"), "not a photo").unwrap();
    let out = root.0.join("out");
    let run = analyse(dir.to_str().unwrap(), &out);
    assert_eq!(run.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains(&format!("error: {}, frame 13: not a photo", dir.join("img125.jpg").display())), "{stderr}");
    assert_eq!(moves(&records(&out)).iter().map(|m| m.0.as_str()).collect::<Vec<_>>(), ["e1g1"]);
}

#[test]
fn a_folder_or_glob_without_photos_is_bad_input_and_writes_nothing() {
    let root = scratch("empty");
    let dir = root.0.join("photos");
    std::fs::create_dir_all(&dir).unwrap();
    let out = root.0.join("out");
    for recording in [dir.display().to_string(), format!("{}/*.jpg", dir.display())] {
        let run = analyse(&recording, &out);
        assert_eq!(run.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(stderr.contains(&format!("error: {recording}: no photos")), "{stderr}");
        assert!(!out.exists());
    }
}
