//! `touchmove calibrate`: on real footage from `../shared/data` (skipped where it is absent), and
//! learning the set on the committed clips (a known position, one refused, a set for another model).

use std::path::Path;
use std::process::Command;

use touchmove::board::{Calibration, WhiteEdge};

/// The shared file at `path`, or `None` (and a note) where `../shared` is absent.
fn shared(path: &str) -> Option<&Path> {
    let path = Path::new(path);
    if !path.exists() {
        eprintln!("skipped: {} is not here", path.display());
        return None;
    }
    Some(path)
}

/// Runs `touchmove calibrate SOURCE ARGS --name NAME` into a fresh folder and loads the result.
fn calibrate(source: &Path, name: &str, args: &[&str]) -> Calibration {
    let dir = std::env::temp_dir().join(format!("touchmove-calibrate-{name}-{}", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_touchmove"))
        .args(["calibrate", source.to_str().unwrap(), "--name", name, "--dir", dir.to_str().unwrap()])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let cal = Calibration::load(&dir.join(format!("{name}.json"))).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    cal
}

#[test]
fn finds_the_empty_webcam_board_by_itself() {
    let Some(clip) = shared("../shared/data/webcam-boards/emptyBoard001.avi") else { return };
    let cal = calibrate(clip, "empty", &["--white", "right"]);
    assert_eq!(cal.white, WhiteEdge::Right);
    assert_eq!(cal.image_size, [640, 480]);
    // The playing area, read off the frame by eye: x 140..508, y 9..376. The board's own
    // coordinates put rank 1 on the right and the a-file at the bottom: a8 is bottom-left.
    let want = [(138.0, 374.0), (143.0, 10.0), (505.0, 11.0), (507.0, 377.0)];
    for (got, (x, y)) in cal.corners.iter().zip(want) {
        assert!((got.x - x).abs() < 8.0 && (got.y - y).abs() < 8.0, "{:?}", cal.corners);
    }
}

#[test]
fn reads_whites_edge_from_the_start_position() {
    let Some(photo) = shared("../shared/data/webcam-boards/chessBoard005.jpg") else { return };
    let cal = calibrate(photo, "start", &[]);
    assert_eq!(cal.white, WhiteEdge::Left, "White's pieces stand along the left edge of this photo");
}

#[test]
fn a_source_that_cannot_be_read_is_bad_input() {
    let out = Command::new(env!("CARGO_BIN_EXE_touchmove")).args(["calibrate", "no/such/video.mp4"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no/such/video.mp4: cannot open"));
}

#[test]
fn a_bumped_camera_is_noticed_on_real_footage() {
    use opencv::core::{Mat, Scalar, Size};
    use opencv::prelude::*;
    use touchmove::board::drift::{Drift, Watch};
    use touchmove::capture::{Capture, Source};

    let Some(clip) = shared("../shared/data/webcam-boards/emptyBoard001.avi") else { return };
    let frame = Capture::open(&Source::File(clip.into())).unwrap().next_frame().unwrap().unwrap().image;
    let cal = Calibration::load(Path::new("calibration/webcam-empty-board.json")).unwrap();
    let watch = Watch::new(cal.clone(), &frame).unwrap();
    assert_eq!(watch.check(&frame).unwrap(), Drift::Still);
    // The camera turned a little: the image moves 23 px (half a square) right and 12 px down.
    let m = Mat::from_slice_2d(&[[1.0f64, 0.0, 23.0], [0.0, 1.0, 12.0]]).unwrap();
    let mut bumped = Mat::default();
    opencv::imgproc::warp_affine(&frame, &mut bumped, &m, Size::new(frame.cols(), frame.rows()), opencv::imgproc::INTER_LINEAR, opencv::core::BORDER_REPLICATE, Scalar::default()).unwrap();
    let Drift::Moved(now) = watch.check(&bumped).unwrap() else { panic!("the bump is noticed") };
    for (a, b) in now.iter().zip(&cal.corners) {
        assert!((a.x - b.x - 23.0).abs() < 6.0 && (a.y - b.y - 12.0).abs() < 6.0, "{now:?} vs {:?}", cal.corners);
    }
}

/// The committed clip whose first frame shows a known position with no hand over the board.
const CLIP: &str = "fixtures/clips/touch-both-4.3.3";
const CLIP_FEN: &str = "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4";
const CLIP_CORNERS: &str = "155.62,341.27,185.2,60.12,466.15,89.31,437.19,370.56";

/// Runs `touchmove calibrate` into `dir` with `args` after the source.
fn run_calibrate(source: &str, dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_touchmove"))
        .args(["calibrate", source, "--name", "board", "--dir", dir.to_str().unwrap()])
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn a_known_position_teaches_the_set_and_analyse_refuses_one_made_for_another_model() {
    let dir = tempfile::tempdir().unwrap();
    let video = format!("{CLIP}/clip.mp4");
    let out = run_calibrate(&video, dir.path(), &["--corners", CLIP_CORNERS, "--fen", CLIP_FEN]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let set_path = dir.path().join("board.set.json");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("board.json") && stdout.contains("board.set.json"), "{stdout}");
    let text = std::fs::read_to_string(&set_path).unwrap();
    let set: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(set["held_out"]["squares"], 64 * 5, "every square, five reads each: {set}");
    assert!(set["reference"].as_str().unwrap().contains("frame 0"), "{set}");

    // The same set, marked as made for another model: analyse refuses it and says how to make one.
    std::fs::write(&set_path, text.replacen(&format!("\"model\":{}", set["model"]), "\"model\":\"0123456789abcdef\"", 1)).unwrap();
    let analysed = Command::new(env!("CARGO_BIN_EXE_touchmove"))
        .args(["analyse", &video, "--calibration", dir.path().join("board.json").to_str().unwrap(), "--fen", CLIP_FEN, "--out", dir.path().join("out").to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&analysed.stderr);
    assert_eq!(analysed.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("0123456789abcdef") && stderr.contains("touchmove calibrate") && stderr.contains("board.set.json"), "{stderr}");
    // --no-set reads with the shipped model alone.
    let plain = Command::new(env!("CARGO_BIN_EXE_touchmove"))
        .args(["analyse", &video, "--calibration", dir.path().join("board.json").to_str().unwrap(), "--fen", CLIP_FEN, "--no-set", "--out", dir.path().join("plain").to_str().unwrap()])
        .output()
        .unwrap();
    assert!(plain.status.success(), "{}", String::from_utf8_lossy(&plain.stderr));
}

#[test]
fn corners_given_from_the_wrong_corner_are_turned_to_the_position_the_frame_shows() {
    let dir = tempfile::tempdir().unwrap();
    let video = format!("{CLIP}/clip.mp4");
    let right: Vec<f64> = CLIP_CORNERS.split(',').map(|v| v.parse().unwrap()).collect();
    // The same corners named a quarter turn on: h8, h1, a1, a8.
    let turned: Vec<String> = (0..8).map(|i| right[(i + 2) % 8].to_string()).collect();
    let out = run_calibrate(&video, dir.path(), &["--corners", &turned.join(","), "--fen", CLIP_FEN]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("start at the wrong corner"), "{stderr}");
    let cal = Calibration::load(&dir.path().join("board.json")).unwrap();
    for (i, got) in cal.corners.iter().enumerate() {
        assert!((got.x - right[2 * i]).abs() < 0.01 && (got.y - right[2 * i + 1]).abs() < 0.01, "{:?}", cal.corners);
    }
    // In the right order they are kept, without a warning.
    let out = run_calibrate(&video, dir.path(), &["--corners", CLIP_CORNERS, "--fen", CLIP_FEN]);
    assert!(out.status.success() && !String::from_utf8_lossy(&out.stderr).contains("wrong corner"));
}

#[test]
fn whites_edge_is_read_from_a_position_that_is_not_the_start() {
    // The promotion clip opens on an endgame of three pieces: no bands of pieces to tell White's
    // edge by, but a position a game explains one way round only.
    let labels: serde_json::Value = serde_json::from_str(&std::fs::read_to_string("fixtures/clips/clean-promotion/labels.json").unwrap()).unwrap();
    let cal = calibrate(Path::new("fixtures/clips/clean-promotion/clip.mp4"), "promotion", &[]);
    for (got, want) in cal.corners.iter().zip(labels["corners"].as_array().unwrap()) {
        let (x, y) = (want[0].as_f64().unwrap(), want[1].as_f64().unwrap());
        assert!((got.x - x).abs() < 8.0 && (got.y - y).abs() < 8.0, "{:?} against {}", cal.corners, labels["corners"]);
    }
}

#[test]
fn a_frame_that_does_not_show_the_position_is_refused_naming_the_squares() {
    let dir = tempfile::tempdir().unwrap();
    let video = format!("{CLIP}/clip.mp4");
    // Asked for the start position, the frame shows four moves later: refused, squares named.
    let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    let out = run_calibrate(&video, dir.path(), &["--corners", CLIP_CORNERS, "--fen", start]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("does not show its position") && stderr.contains("c6 (empty in the position, n read)") && stderr.contains("e4"), "{stderr}");
    assert!(!dir.path().join("board.set.json").exists());
    // The start position only by default: a warning, the calibration, and no set.
    let out = run_calibrate(&video, dir.path(), &["--corners", CLIP_CORNERS]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no set learnt"));
    assert!(dir.path().join("board.json").exists() && !dir.path().join("board.set.json").exists());
}

#[test]
fn a_reference_with_hands_over_the_board_is_refused_naming_the_squares() {
    use opencv::prelude::*;
    let dir = tempfile::tempdir().unwrap();
    // adjust-declared at 1.5 s: White's hand covers h1 and most of g1 (labels.json).
    let mut cap = opencv::videoio::VideoCapture::from_file("fixtures/clips/adjust-declared/clip.mp4", opencv::videoio::CAP_ANY).unwrap();
    let mut frame = opencv::core::Mat::default();
    for _ in 0..=30 {
        assert!(cap.read(&mut frame).unwrap());
    }
    let photo = dir.path().join("hand.png");
    opencv::imgcodecs::imwrite(photo.to_str().unwrap(), &frame, &opencv::core::Vector::new()).unwrap();
    let corners = "462.08,316.17,257.68,389.55,182.48,196.45,372.25,105.41";
    let fen = "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4";
    let out = run_calibrate(photo.to_str().unwrap(), dir.path(), &["--corners", corners, "--fen", fen]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("hands over the board") && stderr.contains("h1"), "{stderr}");
}
