//! `touchmove calibrate` on real footage from `../shared/data` (skipped where it is absent).

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
