//! `touchmove recognise` and `eval-photos` on committed photos (rendered stills with labelled
//! corners): square order from the corners, a corner list that starts at the wrong corner
//! turned back, boards found and turned without them whichever way round the photo was taken,
//! sets learnt from a reference, and the report's shape. Needs ONNX Runtime (see scripts/setup).

use std::path::Path;
use std::process::Command;

use shakmaty::{Board, Color, Square};

fn touchmove(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_touchmove")).args(args).output().expect("touchmove runs")
}

fn labels() -> Vec<serde_json::Value> {
    serde_json::from_str(&std::fs::read_to_string("fixtures/photos/labels.json").unwrap()).unwrap()
}

fn board(fen: &str) -> Board {
    fen.trim().parse::<shakmaty::fen::Fen>().expect("a FEN").as_setup().board.clone()
}

/// Empty, White or Black.
fn kind(board: &Board, sq: Square) -> Option<Color> {
    board.piece_at(sq).map(|p| p.color)
}

fn corners_arg(corners: &[serde_json::Value]) -> String {
    corners.iter().flat_map(|p| [p[0].as_f64().unwrap(), p[1].as_f64().unwrap()]).map(|v| format!("{v:.2}")).collect::<Vec<_>>().join(",")
}

#[test]
fn corners_fix_square_order_and_a_list_starting_at_the_wrong_corner_is_turned_back() {
    for label in labels() {
        let image = Path::new("fixtures/photos").join(label["image"].as_str().unwrap());
        let truth = board(label["fen"].as_str().unwrap());
        let corners = label["corners"].as_array().unwrap().clone();
        let out = touchmove(&["recognise", image.to_str().unwrap(), "--corners", &corners_arg(&corners), "--verbose"]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("corner order: as given"), "{}: {stdout}", image.display());
        let read = board(stdout.lines().next().unwrap());
        let agree = Square::ALL.iter().filter(|&&sq| kind(&read, sq) == kind(&truth, sq)).count();
        assert!(agree >= 62, "{}: {agree}/64 squares with the right occupant colour", image.display());

        // The same corners named a quarter turn on (a8 where h8 is, ...): a dark square at
        // White's right shows it, and the list is turned, with a warning. Which of the two odd
        // turns is the armies' to say: three pieces (the promotion board) cannot.
        let turned: Vec<serde_json::Value> = (0..4).map(|i| corners[(i + 1) % 4].clone()).collect();
        let out = touchmove(&["recognise", image.to_str().unwrap(), "--corners", &corners_arg(&turned), "--verbose"]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(String::from_utf8_lossy(&out.stderr).contains("start at the wrong corner"), "{}: no warning", image.display());
        if truth.occupied().count() < 16 {
            assert!(stdout.contains("corner order: turned 1 quarter turn(s)") || stdout.contains("corner order: turned 3 quarter turn(s)"), "{}: {stdout}", image.display());
            continue;
        }
        assert!(stdout.contains("corner order: turned 3 quarter turn(s)"), "{}: {stdout}", image.display());
        let read = board(stdout.lines().next().unwrap());
        let agree = Square::ALL.iter().filter(|&&sq| kind(&read, sq) == kind(&truth, sq)).count();
        assert!(agree >= 62, "{} turned back: {agree}/64", image.display());
    }
}

#[test]
fn eval_photos_reports_accuracies_and_confusion() {
    let json = std::env::temp_dir().join(format!("touchmove-eval-photos-{}.json", std::process::id()));
    let out = touchmove(&["eval-photos", "fixtures/photos", "--json", json.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("per-square accuracy") && text.contains("occupancy-and-colour accuracy") && text.contains("confusion"), "{text}");
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let scores = &doc["total"];
    assert_eq!(scores["images"], 3);
    let confusion = scores["confusion"].as_array().unwrap();
    let counted: u64 = confusion.iter().flat_map(|row| row.as_array().unwrap()).map(|n| n.as_u64().unwrap()).sum();
    assert_eq!(counted, 3 * 64);
    assert!(scores["occupancy_colour_accuracy"].as_f64().unwrap() >= 0.98, "{scores}");    let _ = std::fs::remove_file(&json);
}

#[test]
fn a_missing_labels_file_is_bad_input() {
    let out = touchmove(&["eval-photos", "fixtures/clips"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("labels.json"));
}

/// A real webcam photo of the start position, found and turned without help.
#[test]
fn a_real_start_position_is_found_and_oriented() {
    let photo = Path::new("../shared/data/webcam-boards/chessBoard005.jpg");
    if !photo.exists() {
        eprintln!("skipped: {} is not here", photo.display());
        return;
    }
    let out = touchmove(&["recognise", photo.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR");
}

#[test]
fn a_missing_or_broken_model_is_named() {
    let photo = "fixtures/photos/clean-castling-frame0.jpg";
    for model in ["no-such-model.onnx", "README.md"] {
        let out = touchmove(&["recognise", photo, "--model", model]);
        assert_eq!(out.status.code(), Some(1), "{model}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(model), "{model}: {err}");
    }
}

#[test]
fn eval_photos_finds_the_boards_itself_and_learns_a_set_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("found.json");
    let out = touchmove(&["eval-photos", "fixtures/photos", "--find", "--json", json.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let scores = &doc["total"];
    assert_eq!((scores["images"].as_u64(), scores["boards_not_found"].as_u64()), (Some(3), Some(0)), "{scores}");
    // Each board found and turned without its corners: a misplaced grid, or a wrong turn, would
    // read many squares wrong. (The sparse clean-promotion board, a hand over one of its corners,
    // is found only in the picture scaled up.)
    assert!(scores["occupancy_colour_accuracy"].as_f64().unwrap() >= 0.95, "{scores}");
    let out = touchmove(&["eval-photos", "fixtures/photos", "--adapt"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.contains("set learnt from clean-castling-frame0.jpg") && text.contains("images 2"), "{text}");
}

#[test]
fn a_reference_photo_teaches_the_set_and_one_that_does_not_show_its_position_is_refused() {
    let photo = "fixtures/photos/touch-both-4.3.3-frame0.jpg";
    let fen = "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 0 1";
    let out = touchmove(&["recognise", photo, "--reference", photo, "--reference-fen", fen, "--verbose"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains(&format!("set learnt from {photo}")) && stdout.contains("squares held out of the fit"), "{stdout}");
    // The default reference position is the start, which this photo does not show.
    let out = touchmove(&["recognise", photo, "--reference", photo]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("does not show its position") && stderr.contains("c6"), "{stderr}");
}

#[test]
fn a_photo_with_no_board_is_a_clear_error() {
    use opencv::core::{Mat, Scalar, Vector};
    use opencv::prelude::*;
    let dir = tempfile::tempdir().unwrap();
    let photo = dir.path().join("wall.png");
    // A plain wall with a soft gradient and some noise: no lattice, no outline of a board.
    let mut wall = Mat::new_rows_cols_with_default(480, 640, opencv::core::CV_8UC3, Scalar::all(0.0)).unwrap();
    for y in 0..480 {
        for x in 0..640 {
            let v = (100 + x / 16 + y / 24 + (x * 7 + y * 13) % 9) as u8;
            *wall.at_2d_mut::<opencv::core::Vec3b>(y, x).unwrap() = opencv::core::Vec3b::from([v, v, v]);
        }
    }
    opencv::imgcodecs::imwrite(photo.to_str().unwrap(), &wall, &Vector::new()).unwrap();
    let out = touchmove(&["recognise", photo.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("no board found"), "{stderr}");
}

#[test]
fn a_photo_is_read_the_same_whichever_way_round_it_was_taken() {
    use opencv::core::{Mat, Vector};
    let original = "fixtures/photos/touch-both-4.3.3-frame0.jpg";
    let upright = touchmove(&["recognise", original]);
    assert!(upright.status.success(), "{}", String::from_utf8_lossy(&upright.stderr));
    let fen = String::from_utf8_lossy(&upright.stdout).trim().to_owned();
    let label = labels().into_iter().find(|l| l["image"] == "touch-both-4.3.3-frame0.jpg").unwrap();
    let truth = board(label["fen"].as_str().unwrap());
    let read = board(&fen);
    assert!(Square::ALL.iter().filter(|&&sq| kind(&read, sq) != kind(&truth, sq)).count() <= 1, "{fen}");
    let image = opencv::imgcodecs::imread(original, opencv::imgcodecs::IMREAD_COLOR).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for (turn, code) in [(1, opencv::core::ROTATE_90_CLOCKWISE), (2, opencv::core::ROTATE_180), (3, opencv::core::ROTATE_90_COUNTERCLOCKWISE)] {
        let mut turned = Mat::default();
        opencv::core::rotate(&image, &mut turned, code).unwrap();
        let path = dir.path().join(format!("turned-{turn}.png"));
        opencv::imgcodecs::imwrite(path.to_str().unwrap(), &turned, &Vector::new()).unwrap();
        let out = touchmove(&["recognise", path.to_str().unwrap()]);
        assert!(out.status.success(), "{turn}: {}", String::from_utf8_lossy(&out.stderr));
        // Turned back the right way: every square's kind as upright (a wrong turn would change
        // dozens); a piece seen at another lean may read as another type.
        let again = board(&String::from_utf8_lossy(&out.stdout));
        let (kinds, types) = Square::ALL.iter().fold((0, 0), |(k, t), &sq| (k + usize::from(kind(&again, sq) != kind(&read, sq)), t + usize::from(again.piece_at(sq) != read.piece_at(sq))));
        assert!(kinds == 0 && types <= 2, "turned {turn} quarter turns: {} against {fen}", String::from_utf8_lossy(&out.stdout));
    }
}

#[test]
fn white_s_edge_can_be_given_without_the_corners() {
    use opencv::core::{Mat, Vector};
    let original = "fixtures/photos/touch-both-4.3.3-frame0.jpg";
    let label = labels().into_iter().find(|l| l["image"] == "touch-both-4.3.3-frame0.jpg").unwrap();
    let truth = board(label["fen"].as_str().unwrap());
    let image = opencv::imgcodecs::imread(original, opencv::imgcodecs::IMREAD_COLOR).unwrap();
    let dir = tempfile::tempdir().unwrap();
    // White sits at the photo's right; turned a quarter turn clockwise, at its bottom.
    let mut turned = Mat::default();
    opencv::core::rotate(&image, &mut turned, opencv::core::ROTATE_90_CLOCKWISE).unwrap();
    let path = dir.path().join("turned.png");
    opencv::imgcodecs::imwrite(path.to_str().unwrap(), &turned, &Vector::new()).unwrap();
    let mut kinds = Vec::new();
    for white in ["bottom", "top"] {
        let out = touchmove(&["recognise", path.to_str().unwrap(), "--white", white]);
        assert!(out.status.success(), "{white}: {}", String::from_utf8_lossy(&out.stderr));
        let read = board(&String::from_utf8_lossy(&out.stdout));
        kinds.push(Square::ALL.iter().filter(|&&sq| kind(&read, sq) != kind(&truth, sq)).count());
    }
    // The edge given is the one used: right where it is White's, a half turn off where not.
    assert!(kinds[0] <= 1 && kinds[1] > 8, "squares of the wrong kind: {kinds:?}");
    let both = touchmove(&["recognise", original, "--white", "left", "--corners", "0,0,1,0,1,1,0,1"]);
    assert_eq!(both.status.code(), Some(2));
}
