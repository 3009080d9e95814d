//! The rendered fixture clips of `fixtures/clips/`: each decodes through the capture module
//! with the labelled number of frames, stays within the size budget, and its labelled moves and
//! rulings are what `touchmove rules` gives for its script today.

use std::path::{Path, PathBuf};

use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess};
use touchmove::capture::{Capture, Source};
use touchmove::cmd::eval::find_clips;
use touchmove::events::Reader;
use touchmove::rules::{Engine, Options, Record};

/// The rendered clips, as `touchmove eval` finds them.
fn clips() -> Vec<PathBuf> {
    find_clips(&[PathBuf::from("fixtures/clips")]).expect("fixtures/clips")
}

fn labels(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("labels.json")).unwrap()).unwrap()
}

#[test]
fn every_clip_decodes_whole_and_fits_the_budget() {
    let dirs = clips();
    assert!(dirs.len() >= 12, "expected at least 12 fixture clips, found {}", dirs.len());
    for dir in dirs {
        let video = dir.join("clip.mp4");
        let bytes = std::fs::metadata(&video).unwrap().len();
        assert!(bytes <= 2 * 1024 * 1024, "{}: {bytes} bytes", video.display());
        let mut capture = Capture::open(&Source::File(video.clone())).unwrap();
        let mut n = 0u64;
        while let Some(frame) = capture.next_frame().unwrap() {
            assert_eq!(frame.index, n);
            n += 1;
        }
        assert_eq!(n, labels(&dir)["n_frames"].as_u64().unwrap(), "{}", video.display());
    }
}

#[test]
fn labelled_rulings_are_what_the_engine_gives() {
    for dir in clips() {
        let label = labels(&dir);
        let pos: Chess = label["fen"].as_str().unwrap().parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap();
        let mut engine = Engine::new(pos, Options { clock: true, declarations: true, ..Options::default() });
        let mut out = Vec::new();
        let file = std::fs::File::open(dir.join("events.jsonl")).unwrap();
        for ev in Reader::new(std::io::BufReader::new(file)) {
            engine.apply(&ev.unwrap(), &mut out);
        }
        engine.finish(&mut out);
        let got: Vec<String> = out
            .iter()
            .filter_map(|r| match r {
                Record::Move(m) => Some(format!("move {}", m.san)),
                Record::Ruling(r) => Some(format!("{} {} {}", r.verdict.as_str(), r.article, r.side.char())),
                _ => None,
            })
            .collect();
        let want: Vec<String> = label["rules"]
            .as_array()
            .unwrap_or_else(|| panic!("{}: labels have no rules; run python -m render.fill_rulings", dir.display()))
            .iter()
            .filter_map(|r| match r["kind"].as_str() {
                Some("move") => Some(format!("move {}", r["san"].as_str().unwrap())),
                Some("ruling") => Some(format!("{} {} {}", r["verdict"].as_str().unwrap(), r["article"].as_str().unwrap(), r["side"].as_str().unwrap())),
                _ => None,
            })
            .collect();
        assert_eq!(got, want, "{}", dir.display());
    }
}
