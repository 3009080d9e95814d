//! Fits the game decoder's parameters on labelled clips. The board model reads every frame of
//! each clip once; the decoder then reads the game from those readings under each candidate
//! setting, in four regimes: the video itself, one still a second (a photo a move or so), and
//! both with 5 % of the square readings replaced by a confident wrong class. A setting scores
//! the plies read before the first divergence, summed over clips and regimes. A coordinate
//! search (each parameter halved and doubled in turn, kept where it reads more plies) starts
//! from the defaults and prints every trial.
//!
//! Fit on clips the figures are not reported on (`fixtures/variants`), then check on others;
//! `--score` only scores the defaults, naming each clip and regime not read exactly:
//! `cargo run --release --example fit_decoder -- fixtures/variants [--score]`

use std::path::{Path, PathBuf};

use shakmaty::{CastlingMode, Chess};
use touchmove::capture::{Capture, Source};
use touchmove::detect::reading::CLASSES;
use touchmove::detect::{DEFAULT_MODEL, Model, Reading};
use touchmove::eval::labels::Labels;
use touchmove::read::{self, Decoded, Decoder, Options};

/// One labelled clip, read.
struct Clip {
    name: String,
    start: Chess,
    moves: Vec<String>,
    readings: Vec<Reading>,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let only_score = args.iter().any(|a| a == "--score");
    let roots: Vec<PathBuf> = args.iter().filter(|a| *a != "--score").map(PathBuf::from).collect();
    let dirs = touchmove::cmd::eval::find_clips(&roots).expect("folders of labelled clips");
    let mut model = Model::load(Path::new(DEFAULT_MODEL), 2).expect("the board model");
    let started = std::time::Instant::now();
    let clips: Vec<Clip> = dirs.iter().map(|dir| read(dir, &mut model)).collect();
    eprintln!("{} clips read in {:.0} s", clips.len(), started.elapsed().as_secs_f64());
    let regimes = regimes(&clips);
    let total: usize = regimes.iter().map(|(c, _, _)| c.moves.len()).sum();
    let mut best = Options::default();
    let mut best_score = score(&regimes, best);
    println!("defaults: {best_score} of {total} plies");
    if only_score {
        for (clip, regime, readings) in &regimes {
            let read = decoded(clip, readings, best);
            let right = read.iter().zip(&clip.moves).take_while(|(a, b)| a == b).count();
            if right != clip.moves.len() {
                println!("  {} ({regime}): {right} of {} plies, read {}", clip.name, clip.moves.len(), read.join(" "));
            }
        }
        return;
    }
    for pass in 0..2 {
        for (name, get, set) in PARAMS {
            for factor in [0.5, 2.0] {
                let mut trial = best;
                set(&mut trial, get(&best) * factor);
                let s = score(&regimes, trial);
                println!("pass {pass}: {name} = {:.3}: {s} plies", get(&trial));
                if s > best_score {
                    (best, best_score) = (trial, s);
                }
            }
        }
    }
    println!("best: {best_score} of {total} plies with");
    for (name, get, _) in PARAMS {
        println!("  {name} = {:.3}", get(&best));
    }
}

type Getter = fn(&Options) -> f64;
type Setter = fn(&mut Options, f64);

/// The parameters searched.
const PARAMS: [(&str, Getter, Setter); 11] = [
    ("params.floor", |o| f64::from(o.params.floor), |o, v| o.params.floor = v as f32),
    ("params.type_weight", |o| f64::from(o.params.type_weight), |o, v| o.params.type_weight = v as f32),
    ("params.look_s", |o| o.params.look_s, |o, v| o.params.look_s = v),
    ("costs.legal", |o| o.costs.legal, |o, v| o.costs.legal = v),
    ("costs.begin", |o| o.costs.begin, |o, v| o.costs.begin = v),
    ("costs.back", |o| o.costs.back, |o, v| o.costs.back = v),
    ("costs.skip", |o| o.costs.skip, |o, v| o.costs.skip = v),
    ("costs.illegal", |o| o.costs.illegal, |o, v| o.costs.illegal = v),
    ("costs.unheld", |o| o.costs.unheld, |o, v| o.costs.unheld = v),
    ("costs.underpromotion", |o| o.costs.underpromotion, |o, v| o.costs.underpromotion = v),
    ("costs.long_underpromotion", |o| o.costs.long_underpromotion, |o, v| o.costs.long_underpromotion = v),
];

/// Every frame of the clip in `dir` through the model.
fn read(dir: &Path, model: &mut Model) -> Clip {
    let labels = Labels::load(dir).expect("labels");
    let calibration = touchmove::cmd::eval::calibration(&labels, dir).expect("a calibration");
    let start: Chess = labels.fen.clone().into_position(CastlingMode::Standard).expect("a position");
    let moves = labels.moves.clone().unwrap_or_default().iter().map(|m| m.uci.to_string()).collect();
    let mut capture = Capture::open(&Source::recording(&labels.video)).expect("the recording");
    let mut readings = Vec::new();
    while let Some(frame) = capture.next_frame().expect("a frame") {
        let warped = calibration.warp(&frame.image, model.layout()).expect("a warp");
        readings.push(model.read(&warped, frame.index, frame.t).expect("a reading"));
    }
    Clip { name: labels.name, start, moves, readings }
}

/// The clips in each regime: as filmed, a still a second, and both with 5 % of squares flipped.
fn regimes(clips: &[Clip]) -> Vec<(&Clip, &'static str, Vec<Reading>)> {
    let mut out = Vec::new();
    for (i, clip) in clips.iter().enumerate() {
        let mut second = -1.0;
        let stills: Vec<Reading> = clip
            .readings
            .iter()
            .filter(|r| {
                let keep = r.t.floor() > second;
                if keep {
                    second = r.t.floor();
                }
                keep
            })
            .cloned()
            .collect();
        for (regime, readings) in [("video", clip.readings.clone()), ("stills", stills)] {
            out.push((clip, regime, readings.clone()));
            out.push((clip, if regime == "video" { "video, flipped" } else { "stills, flipped" }, flipped(readings, i as u64 + 1)));
        }
    }
    out
}

/// `readings` with 5 % of their squares read as a random class with probability 0.9.
fn flipped(mut readings: Vec<Reading>, seed: u64) -> Vec<Reading> {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    for r in &mut readings {
        for sq in &mut r.squares {
            if next() < 0.05 {
                let class = (next() * CLASSES as f64) as usize % CLASSES;
                let rest = 0.1 / (CLASSES - 1) as f32;
                sq.classes = std::array::from_fn(|c| if c == class { 0.9 } else { rest });
            }
        }
    }
    readings
}

/// Plies read before the first divergence, over every clip and regime.
fn score(regimes: &[(&Clip, &str, Vec<Reading>)], opts: Options) -> usize {
    regimes.iter().map(|(clip, _, readings)| decode(clip, readings, opts)).sum()
}

/// Plies of `clip` read from `readings` before the first divergence.
fn decode(clip: &Clip, readings: &[Reading], opts: Options) -> usize {
    decoded(clip, readings, opts).iter().zip(&clip.moves).take_while(|(a, b)| a == b).count()
}

/// The moves read from `readings`, in UCI.
fn decoded(clip: &Clip, readings: &[Reading], opts: Options) -> Vec<String> {
    let mut d = Decoder::new(clip.start.clone(), opts);
    let mut out = Vec::new();
    for r in readings {
        d.push(r, &mut out);
    }
    d.finish(&mut out);
    let uci = |m: &read::DecodedMove| m.mv.to_uci(CastlingMode::Standard).to_string();
    let mut moves = Vec::new();
    for o in out {
        match o {
            Decoded::Move(m) => moves.push(uci(&m)),
            Decoded::Unfinished { mv, .. } => moves.extend(mv.as_ref().map(uci)),
            Decoded::Replaced { from, by, .. } => {
                moves.truncate(from);
                moves.extend(by.iter().map(uci));
            }
            Decoded::Correction { .. } => {}
        }
    }
    moves
}
