//! Fits the priors of `photo::locate` and `photo::position` on the labelled real photos of
//! `../shared/data`, each read from its labelled corners (turned as `training/real/` says):
//!
//! - `ARMY_SLOPE`: the maximum-likelihood slope of the log-odds that White sits at the bottom
//!   against the armies' gap in ranks ([`locate::army_gap`]), scored against the half turn;
//! - `MISSET`: the chance of a board set up against Law 2.1 (its [`orientation::chequer`] below
//!   0), as (k + 1) / (n + 2), and the chequer's range;
//! - `NO_KING`: the chance that a side has no king on the board, as (k + 1) / (n + 2) over the
//!   labelled positions' sides;
//! - `MISORDERED`: the chance that corners labelled a8, h8, h1, a1 by hand start at the wrong
//!   corner, as (k + 1) / (n + 2) over the afka2d labels (the hand-labelled corner lists;
//!   `training/real/orientation.json` names those turned);
//! - `COORDINATE_SLOPE`: the maximum-likelihood slope of the log-odds of a turn against its half
//!   turn per unit of their [`coordinates::glyph_fit`] difference, on those photos and on
//!   rendered stills when a folder of them is given (`render.photos` labels, as
//!   docs/measuring.md makes them).
//!
//! `cargo run --release --example fit_priors -- ../shared/data [RENDERED_STILLS]`

use std::path::{Path, PathBuf};

use opencv::prelude::MatTraitConst;

use touchmove::board::{Calibration, Found, Px, WhiteEdge, coordinates, orientation};
use touchmove::capture::{Capture, Source};
use touchmove::detect::{DEFAULT_MODEL, Model};
use touchmove::photo::locate;

/// A labelled photo: the image, its corners a8, h8, h1, a1, and its position's board (FEN).
struct Item {
    image: PathBuf,
    corners: [Px; 4],
    board: String,
}

impl Item {
    fn pieces(&self) -> bool {
        !self.board.starts_with("8/8/8/8/8/8/8/8")
    }
}

fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Four points of a JSON list, relabelled as if the board were turned `turns` quarter turns.
fn turned(points: &serde_json::Value, turns: usize) -> [Px; 4] {
    let p: Vec<Px> = points.as_array().expect("four points").iter().map(|p| Px { x: p[0].as_f64().unwrap(), y: p[1].as_f64().unwrap() }).collect();
    std::array::from_fn(|i| p[(i + turns) % 4])
}

/// The labelled photos, as `training/board_model/cache.py` reads them.
fn items(root: &Path) -> Vec<Item> {
    let orient = read_json(Path::new("training/real/orientation.json"));
    let turns = |set: &str, image: &str| orient[set].get(image).and_then(|t| t.as_u64()).unwrap_or(0) as usize;
    let board = |fen: &serde_json::Value| fen.as_str().unwrap().split(' ').next().unwrap().to_owned();
    let mut items = Vec::new();
    for label in read_json(&root.join("afka2d-overhead-photos/labels.json")).as_array().unwrap() {
        let image = label["image"].as_str().unwrap();
        let corners = turned(&label["corners"], turns("afka2d-overhead-photos", image));
        items.push(Item { image: root.join("afka2d-overhead-photos").join(image), corners, board: board(&label["fen"]) });
    }
    for label in read_json(&root.join("webcam-boards/labels.json")).as_array().unwrap() {
        let Some(image) = label["image"].as_str() else { continue };
        let corners = turned(&label["warp_points"], turns("webcam-boards", image));
        items.push(Item { image: root.join("webcam-boards").join(image), corners, board: board(&label["fen_board"]) });
    }
    let found = read_json(Path::new("training/real/phone-photos-fen.corners.json"));
    for label in read_json(&root.join("phone-photos-fen/labels.json")).as_array().unwrap() {
        let image = label["image"].as_str().unwrap();
        let entry = &found[image];
        let corners = turned(&entry["image_order"], entry["quarter_turns"].as_u64().unwrap() as usize);
        items.push(Item { image: root.join("phone-photos-fen").join(image), corners, board: board(&label["fen_board"]) });
    }
    items
}

/// The rendered stills of `folder` (labels in the afka2d shape).
fn rendered(folder: &Path) -> Vec<Item> {
    let board = |fen: &serde_json::Value| fen.as_str().unwrap().split(' ').next().unwrap().to_owned();
    let labels = read_json(&folder.join("labels.json"));
    labels.as_array().unwrap().iter().map(|l| Item { image: folder.join(l["image"].as_str().unwrap()), corners: turned(&l["corners"], 0), board: board(&l["fen"]) }).collect()
}

/// The slope `s` maximising the sum of ln sigmoid(s x) over `xs`, by golden-section search on
/// [0.01, 20].
fn logistic_slope(xs: &[f64]) -> f64 {
    let likelihood = |s: f64| -> f64 { xs.iter().map(|x| -(1.0 + (-s * x).exp()).ln()).sum() };
    let (mut lo, mut hi) = (0.01f64, 20.0f64);
    let phi = (5f64.sqrt() - 1.0) / 2.0;
    for _ in 0..100 {
        let (a, b) = (hi - phi * (hi - lo), lo + phi * (hi - lo));
        if likelihood(a) > likelihood(b) { hi = b } else { lo = a }
    }
    (lo + hi) / 2.0
}

/// Each item's [`coordinates::glyph_fit`] of its own turn less its half turn's.
fn glyph_margins(items: &[Item]) -> Vec<f64> {
    items
        .iter()
        .map(|item| {
            let frame = Capture::open(&Source::File(item.image.clone())).unwrap().next_frame().unwrap().unwrap();
            let fit = coordinates::glyph_fit(&frame.image, item.corners).unwrap();
            println!("{}: printed coordinates {:.2} against the half turn's {:.2}", item.image.display(), fit[0], fit[2]);
            fit[0] - fit[2]
        })
        .collect()
}

fn main() {
    let root = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "../shared/data".into()));
    let mut model = Model::load(Path::new(DEFAULT_MODEL), 2).expect("the board model");
    let items = items(&root);
    let mut margins = glyph_margins(&items);
    if let Some(stills) = std::env::args().nth(2) {
        margins.extend(glyph_margins(&rendered(Path::new(&stills))));
    }
    let sides = 2 * items.len();
    let kingless: usize = items.iter().map(|i| usize::from(!i.board.contains('K')) + usize::from(!i.board.contains('k'))).sum();
    let (mut gaps, mut chequers) = (Vec::new(), Vec::new());
    for item in items.iter().filter(|i| i.pieces()) {
        let frame = Capture::open(&Source::File(item.image.clone())).unwrap().next_frame().unwrap().unwrap();
        let size = [frame.image.cols() as u32, frame.image.rows() as u32];
        let cal = Calibration::from_corners(String::new(), 0, size, item.corners, WhiteEdge::Bottom, Found::Given).unwrap();
        let reading = model.read(&cal.warp(&frame.image, model.layout()).unwrap(), 0, 0.0).unwrap();
        let chequer = orientation::chequer(&frame.image, item.corners).unwrap();
        let gap = locate::army_gap(&reading);
        println!("{}: chequer {chequer:.2}, army gap {}", item.image.display(), gap.map_or("-".into(), |g| format!("{g:.2}")));
        gaps.extend(gap);
        chequers.push(chequer);
    }
    // ln P(right way up) - against the half turn, whose gap is the opposite - summed: the
    // log-likelihood of the slope.
    let slope = logistic_slope(&gaps);
    let against = chequers.iter().filter(|c| **c < 0.0).count();
    let (min, max) = chequers.iter().fold((f64::MAX, f64::MIN), |(lo, hi), c| (lo.min(*c), hi.max(*c)));
    let unbounded = if slope > 19.9 { "; at the search's bound: the data do not bound it" } else { "" };
    println!("ARMY_SLOPE: {slope:.2} ({} positions with both colours{unbounded})", gaps.len());
    println!("NO_KING: ({kingless} + 1) / ({sides} + 2) = {:.3}", (kingless + 1) as f64 / (sides + 2) as f64);
    let afka2d = items.iter().filter(|i| i.image.starts_with(root.join("afka2d-overhead-photos"))).count();
    let misordered = read_json(Path::new("training/real/orientation.json"))["afka2d-overhead-photos"].as_object().map_or(0, |turned| turned.values().filter(|t| t.as_u64() != Some(0)).count());
    println!("MISORDERED: ({misordered} + 1) / ({afka2d} + 2) = {:.4}", (misordered + 1) as f64 / (afka2d + 2) as f64);
    let wrong = margins.iter().filter(|m| **m <= 0.0).count();
    println!("COORDINATE_SLOPE: {:.2} ({} photos, {wrong} whose printed coordinates favour the half turn)", logistic_slope(&margins), margins.len());
    println!("MISSET: ({against} + 1) / ({} + 2) = 1 / {:.0}; chequer from {min:.2} to {max:.2}", chequers.len(), (chequers.len() + 2) as f64 / (against + 1) as f64);
}
