//! `touchmove calibrate` on real footage from `../shared/data` (skipped where it is absent).

use std::path::Path;
use std::process::Command;

use touchmove::board::{Calibration, WhiteEdge};

#[test]
fn finds_the_empty_webcam_board_by_itself() {
    let clip = Path::new("../shared/data/webcam-boards/emptyBoard001.avi");
    if !clip.exists() {
        eprintln!("skipped: {} is not here", clip.display());
        return;
    }
    let dir = std::env::temp_dir().join(format!("touchmove-calibrate-{}", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_touchmove"))
        .args(["calibrate", clip.to_str().unwrap(), "--white", "right", "--name", "empty", "--dir", dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let cal = Calibration::load(&dir.join("empty.json")).unwrap();
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
    let photo = Path::new("../shared/data/webcam-boards/chessBoard005.jpg");
    if !photo.exists() {
        eprintln!("skipped: {} is not here", photo.display());
        return;
    }
    let dir = std::env::temp_dir().join(format!("touchmove-calibrate-white-{}", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_touchmove"))
        .args(["calibrate", photo.to_str().unwrap(), "--name", "start", "--dir", dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let cal = Calibration::load(&dir.join("start.json")).unwrap();
    assert_eq!(cal.white, WhiteEdge::Left, "White's pieces stand along the left edge of this photo");
}

#[test]
fn a_source_that_cannot_be_read_is_bad_input() {
    let out = Command::new(env!("CARGO_BIN_EXE_touchmove")).args(["calibrate", "no/such/video.mp4"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no/such/video.mp4: cannot open"));
}
