//! `touchmove eval-photos`: the board model scored on a folder of labelled photos (the formats
//! of `../shared/data`): per-square accuracy, occupancy-and-colour accuracy, whole boards, and a
//! confusion matrix.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use opencv::imgcodecs;
use opencv::prelude::MatTraitConst;
use serde::Deserialize;
use serde_json::json;

use super::Exit;
use crate::board::{Px, corners};
use crate::detect::{CLASSES, DEFAULT_MODEL, Model};
use crate::photo::{self, class_letter, classes_of, locate, reference};

/// Arguments of `touchmove eval-photos`.
#[derive(Debug, clap::Args)]
#[command(
    about = "Score the board model on a folder of labelled photos",
    long_about = "Reads every photo listed in DIR/labels.json and compares the position the model reads with \
the label. Three label shapes are understood (those of ../shared/data):\n\
  {image, fen, corners}: corners a8, h8, h1, a1 in pixels (orientation given);\n\
  {image, fen_board, warp_points}: corners top-left, top-right, bottom-right, bottom-left as seen; \
the orientation is read from the pieces (any rotation_deg is ignored: it is unreliable);\n\
  {image, fen_board}: the board is found automatically and the orientation read from the pieces.\n\n\
Prints per-square accuracy (13 classes), occupancy-and-colour accuracy (empty / white / black), \
whole-board accuracy, the confusion matrix and each image's wrong squares.\n\n\
Exit codes: 0 scored, 1 the model failed, 2 a missing or malformed labels file.",
    after_help = "Example (the photos held out of training):\n  touchmove eval-photos ../shared/data/afka2d-overhead-photos --held-out training/real/held-out.json"
)]
pub struct Args {
    /// Folders holding photos and a labels.json.
    #[arg(value_name = "DIR", required = true)]
    pub dirs: Vec<PathBuf>,
    /// Score only the photos this JSON file lists under the folder's name
    /// (`{"folder": ["image.jpg", ...]}`), e.g. those held out of training.
    #[arg(long, value_name = "FILE.json")]
    pub held_out: Option<PathBuf>,
    /// The board model (ONNX).
    #[arg(long, value_name = "FILE.onnx", default_value = DEFAULT_MODEL)]
    pub model: PathBuf,
    /// Ignore the labels' corners: find each board and its orientation as `recognise` does
    /// without --corners, and score that.
    #[arg(long)]
    pub find: bool,
    /// Learn each folder's set first (see `calibrate --fen`) from its first labelled photo (the
    /// first held out, with --held-out), and score the others.
    #[arg(long)]
    pub adapt: bool,
    /// Also write the scores as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

#[derive(Deserialize)]
struct Label {
    image: String,
    #[serde(alias = "fen_board")]
    fen: String,
    corners: Option<[[f64; 2]; 4]>,
    warp_points: Option<[[f64; 2]; 4]>,
}

/// Counts over a set of photos.
#[derive(Default)]
struct Tally {
    images: usize,
    boards_right: usize,
    squares: usize,
    squares_right: usize,
    colour_right: usize,
    confusion: [[usize; CLASSES]; CLASSES],
    not_found: usize,
}

fn colour(class: usize) -> usize {
    match class {
        0 => 0,
        1..=6 => 1,
        _ => 2,
    }
}

fn to_px(points: [[f64; 2]; 4]) -> [Px; 4] {
    points.map(|[x, y]| Px { x, y })
}

/// Runs the command: prints the report on stdout.
pub fn run(args: &Args, out: &mut impl std::io::Write) -> Exit {
    let held_out: Option<BTreeMap<String, Vec<String>>> = match &args.held_out {
        None => None,
        Some(path) => match std::fs::read_to_string(path).map_err(|e| e.to_string()).and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string())) {
            Ok(map) => Some(map),
            Err(e) => return Exit::BadInput(format!("{}: {e}", path.display())),
        },
    };
    let mut model = match Model::load(&args.model, 2) {
        Ok(m) => m,
        Err(e) => return Exit::Failed(e.to_string()),
    };
    let mut report = String::new();
    let mut json_sets = Vec::new();
    let mut total = Tally::default();
    for dir in &args.dirs {
        let labels_path = dir.join("labels.json");
        let labels: Vec<serde_json::Value> = match std::fs::read_to_string(&labels_path).map_err(|e| e.to_string()).and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string())) {
            Ok(l) => l,
            Err(e) => return Exit::BadInput(format!("{}: {e}", labels_path.display())),
        };
        let name = folder_name(dir);
        let only = held_out.as_ref().map(|m| m.get(&name).cloned().unwrap_or_default());
        let mut tally = Tally::default();
        let mut wrong_lines = Vec::new();
        let mut adapted = String::new();
        let reference = if args.adapt {
            let mut candidates = labels.iter().filter_map(|v| v.get("image").and_then(|i| i.as_str()));
            match candidates.find(|i| only.as_ref().is_none_or(|o| o.iter().any(|x| x == i))) {
                Some(image) => {
                    let value = labels.iter().find(|v| v.get("image").and_then(|i| i.as_str()) == Some(image)).cloned().unwrap_or_default();
                    match learn_set(&mut model, dir, value) {
                        Ok(summary) => adapted = format!("set learnt from {image}: {summary}\n"),
                        Err(e) => return e,
                    }
                    Some(image.to_owned())
                }
                None => None,
            }
        } else {
            None
        };
        for (i, value) in labels.iter().enumerate() {
            if value.get("image").is_none() {
                continue; // entries for clips, not photos
            }
            let label: Label = match serde_json::from_value(value.clone()) {
                Ok(l) => l,
                Err(e) => return Exit::BadInput(format!("{}: entry {i}: {e}", labels_path.display())),
            };
            if only.as_ref().is_some_and(|o| !o.contains(&label.image)) || reference.as_ref() == Some(&label.image) {
                continue;
            }
            let truth = match label.fen.split(' ').next().unwrap_or("").parse::<shakmaty::fen::Fen>() {
                Ok(fen) => classes_of(&fen.as_setup().board),
                Err(e) => return Exit::BadInput(format!("{}: {}: FEN {:?}: {e}", labels_path.display(), label.image, label.fen)),
            };
            let path = dir.join(&label.image);
            let image = match imgcodecs::imread(&path, imgcodecs::IMREAD_COLOR) {
                Ok(m) if !m.empty() => m,
                _ => return Exit::BadInput(format!("{}: not a readable image", path.display())),
            };
            tally.images += 1;
            let given = if args.find { (None, None) } else { (label.corners, label.warp_points) };
            let seen = match given {
                (Some(c), _) => photo::recognise_given(&mut model, &image, to_px(c)),
                (None, Some(w)) => photo::recognise_with(&mut model, &image, corners::image_order(to_px(w)), false),
                (None, None) => photo::recognise(&mut model, &image, None, None),
            };
            let seen = match seen {
                Ok(s) => s,
                Err(photo::PhotoError::NoBoard) => {
                    tally.not_found += 1;
                    tally.squares += 64;
                    wrong_lines.push(format!("  {}: no board found", label.image));
                    continue;
                }
                Err(e) => return Exit::Failed(format!("{}: {e}", path.display())),
            };
            let got = classes_of(&seen.board);
            let mut wrong = Vec::new();
            for sq in shakmaty::Square::ALL {
                let (t, g) = (truth[sq as usize], got[sq as usize]);
                tally.confusion[t][g] += 1;
                tally.squares += 1;
                tally.squares_right += usize::from(t == g);
                tally.colour_right += usize::from(colour(t) == colour(g));
                if t != g {
                    wrong.push(format!("{sq} {}->{}", class_letter(t), class_letter(g)));
                }
            }
            if wrong.is_empty() {
                tally.boards_right += 1;
            } else {
                wrong_lines.push(format!("  {}: {}", label.image, wrong.join(", ")));
            }
        }
        if let Err(e) = model.set_correction(None) {
            return Exit::Failed(e.to_string());
        }
        report += &section(&format!("{} ({})", dir.display(), if only.is_some() { "held-out photos" } else { "all photos" }), &tally);
        report += &adapted;
        if !wrong_lines.is_empty() {
            report += "wrong squares (truth->read):\n";
            report += &(wrong_lines.join("\n") + "\n");
        }
        report += "\n";
        json_sets.push(json!({"dir": dir, "held_out_only": only.is_some(), "scores": scores(&tally)}));
        merge(&mut total, &tally);
    }
    if args.dirs.len() > 1 {
        report += &section("all folders", &total);
    }
    if let Some(path) = &args.json {
        let doc = json!({"model": args.model, "sets": json_sets, "total": scores(&total)});
        if let Err(e) = std::fs::write(path, serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n") {
            return Exit::Failed(format!("{}: {e}", path.display()));
        }
    }
    match out.write_all(report.as_bytes()) {
        Ok(()) => Exit::Ok,
        Err(e) => Exit::Failed(e.to_string()),
    }
}

/// Learns the set of a folder from one labelled photo (`value`, its labels.json entry) and sets
/// it on the model; returns the correction's summary.
fn learn_set(model: &mut Model, dir: &Path, value: serde_json::Value) -> Result<String, Exit> {
    let label: Label = serde_json::from_value(value).map_err(|e| Exit::BadInput(format!("{}: {e}", dir.join("labels.json").display())))?;
    let path = dir.join(&label.image);
    let bad = |e: String| Exit::BadInput(format!("{}: {e}", path.display()));
    let board = label.fen.split(' ').next().unwrap_or("").parse::<shakmaty::fen::Fen>().map_err(|e| bad(e.to_string()))?.as_setup().board.clone();
    let image = match imgcodecs::imread(&path, imgcodecs::IMREAD_COLOR) {
        Ok(m) if !m.empty() => m,
        _ => return Err(bad("not a readable image".into())),
    };
    let corners = match (label.corners, label.warp_points) {
        (Some(c), _) => to_px(c),
        (None, Some(w)) => locate::locate_among(model, &image, &[corners::image_order(to_px(w))], Some(&board)).map_err(|e| bad(e.to_string()))?.corners,
        (None, None) => locate::locate(model, &image, Some(&board)).map_err(|e| bad(e.to_string()))?.corners,
    };
    let set = reference::learn(model, &image, corners, &board, path.display().to_string()).map_err(|e| bad(e.to_string()))?;
    let summary = set.summary();
    model.set_correction(Some(set)).map_err(|e| Exit::Failed(e.to_string()))?;
    Ok(summary)
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 { f64::NAN } else { a as f64 / b as f64 }
}

fn scores(t: &Tally) -> serde_json::Value {
    json!({
        "images": t.images,
        "boards_not_found": t.not_found,
        "square_accuracy": ratio(t.squares_right, t.squares),
        "occupancy_colour_accuracy": ratio(t.colour_right, t.squares),
        "board_accuracy": ratio(t.boards_right, t.images),
        "confusion": t.confusion,
    })
}

fn merge(total: &mut Tally, t: &Tally) {
    total.images += t.images;
    total.boards_right += t.boards_right;
    total.squares += t.squares;
    total.squares_right += t.squares_right;
    total.colour_right += t.colour_right;
    total.not_found += t.not_found;
    for (row, other) in total.confusion.iter_mut().zip(&t.confusion) {
        for (a, b) in row.iter_mut().zip(other) {
            *a += b;
        }
    }
}

fn section(title: &str, t: &Tally) -> String {
    let pct = |a, b| 100.0 * ratio(a, b);
    let mut s = format!(
        "## {title}\nimages {} (board not found: {})\nper-square accuracy {:.2}% ({}/{})\noccupancy-and-colour accuracy {:.2}%\nwhole boards right {:.1}% ({}/{})\n",
        t.images,
        t.not_found,
        pct(t.squares_right, t.squares),
        t.squares_right,
        t.squares,
        pct(t.colour_right, t.squares),
        pct(t.boards_right, t.images),
        t.boards_right,
        t.images
    );
    s += "confusion (rows truth, columns read):\n     ";
    for c in 0..CLASSES {
        s += &format!("{:>5}", class_letter(c));
    }
    s += "\n";
    for (r, row) in t.confusion.iter().enumerate() {
        s += &format!("{:>5}", class_letter(r));
        for n in row {
            s += &format!("{n:>5}");
        }
        s += "\n";
    }
    s
}

/// The folder name `--held-out` lists are keyed on.
fn folder_name(dir: &Path) -> String {
    dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}
