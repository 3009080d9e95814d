//! Measures automatic board finding on labelled real photos: for each image of a folder in the
//! formats of `../shared/data` (`labels.json` with `corners` a8,h8,h1,a1, or `warp_points`
//! top-left, top-right, bottom-right, bottom-left), whether a board is found and how far its
//! corners are from the labels, in squares (the worst of the four corners).
//!
//! `cargo run --release --example corner_accuracy -- ../shared/data/webcam-boards ../shared/data/afka2d-overhead-photos`

use std::path::Path;

use touchmove::board::{Px, corners};
use touchmove::capture::{Capture, Source};

fn main() {
    for dir in std::env::args().skip(1) {
        let labels: Vec<serde_json::Value> =
            serde_json::from_str(&std::fs::read_to_string(Path::new(&dir).join("labels.json")).expect("labels.json")).expect("a JSON list");
        let (mut n, mut found, mut within_quarter, mut within_half) = (0, 0, 0, 0);
        let mut errors = Vec::new();
        let started = std::time::Instant::now();
        for label in &labels {
            let Some(image) = label["image"].as_str() else { continue };
            let points = label.get("corners").or_else(|| label.get("warp_points")).expect("corners");
            let truth: Vec<Px> = points.as_array().unwrap().iter().map(|p| Px { x: p[0].as_f64().unwrap(), y: p[1].as_f64().unwrap() }).collect();
            let truth = corners::image_order([truth[0], truth[1], truth[2], truth[3]]);
            n += 1;
            let source = Source::File(Path::new(&dir).join(image));
            let frame = Capture::open(&source).unwrap().next_frame().unwrap().unwrap();
            let Some(got) = corners::find(&frame.image).unwrap() else {
                println!("{image}: not found");
                continue;
            };
            found += 1;
            let side = (0..4).map(|i| (truth[i].x - truth[(i + 1) % 4].x).hypot(truth[i].y - truth[(i + 1) % 4].y)).sum::<f64>() / 32.0;
            // Image order is ambiguous for a board turned 45 degrees: the best of the four starts.
            let err = (0..4).map(|k| (0..4).map(|i| (got[(i + k) % 4].x - truth[i].x).hypot(got[(i + k) % 4].y - truth[i].y)).fold(0.0, f64::max)).fold(f64::INFINITY, f64::min) / side;
            within_quarter += usize::from(err < 0.25);
            within_half += usize::from(err < 0.5);
            errors.push(err);
            println!("{image}: {err:.3} squares");
        }
        errors.sort_by(f64::total_cmp);
        let median = errors.get(errors.len() / 2).copied().unwrap_or(f64::NAN);
        println!(
            "{dir}: {n} images, board found in {found}, corners within 1/4 square in {within_quarter}, within 1/2 in {within_half}; median error {median:.3} squares; {:.2} s an image",
            started.elapsed().as_secs_f64() / n as f64
        );
    }
}
