//! What a user sees on a video that cannot be read: touchmove's error alone, with exit code 2,
//! not the lines OpenCV's backends print (FFmpeg's `[mov,mp4,...] moov atom not found`,
//! GStreamer's `GStreamer-CRITICAL` assertions), unless RUST_LOG asks for them.

use std::path::Path;
use std::process::{Command, Output};

const CLIP: &str = "fixtures/clips/touch-own-4.3.1";

/// Runs touchmove with `args` as a user's shell would, none of the logging variables set, or
/// RUST_LOG as given.
fn touchmove(args: &[&str], rust_log: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_touchmove"));
    cmd.args(args);
    for name in ["RUST_LOG", "OPENCV_LOG_LEVEL", "OPENCV_FFMPEG_LOGLEVEL", "OPENCV_VIDEOIO_DEBUG", "GST_DEBUG"] {
        cmd.env_remove(name);
    }
    if let Some(filter) = rust_log {
        cmd.env("RUST_LOG", filter);
    }
    cmd.output().expect("touchmove runs")
}

/// A video cut off after its first kilobyte, and a text file named like a video.
fn bad_videos(dir: &Path) -> [String; 2] {
    let clip = std::fs::read(format!("{CLIP}/clip.mp4")).unwrap();
    let (truncated, text) = (dir.join("truncated.mp4"), dir.join("notes.mp4"));
    std::fs::write(&truncated, &clip[..1000]).unwrap();
    std::fs::write(&text, "board 3, round 5: not a video").unwrap();
    [truncated, text].map(|p| p.to_str().unwrap().to_owned())
}

#[test]
fn a_video_that_cannot_be_read_gives_touchmoves_error_alone() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let calibration = format!("{CLIP}/calibration.json");
    for video in bad_videos(dir.path()) {
        let calibrations = dir.path().join("calibration");
        let runs = [
            touchmove(&["analyse", &video, "--calibration", &calibration, "--out", out.to_str().unwrap()], None),
            touchmove(&["calibrate", &video, "--dir", calibrations.to_str().unwrap()], None),
        ];
        for run in runs {
            assert_eq!(run.status.code(), Some(2), "{video}");
            let stderr = String::from_utf8_lossy(&run.stderr);
            let want = format!("error: {video}: cannot open (not a video, image, camera or stream OpenCV can read)");
            assert_eq!(stderr.lines().collect::<Vec<_>>(), [want.as_str()], "{video}: nothing but touchmove's error");
            assert!(!stderr.contains("GStreamer") && !stderr.contains("moov") && !stderr.contains("[mov"), "{stderr}");
            assert!(run.stdout.is_empty(), "{video}: {}", String::from_utf8_lossy(&run.stdout));
        }
    }
}

#[test]
fn rust_log_lets_the_libraries_speak() {
    let dir = tempfile::tempdir().unwrap();
    let [truncated, _] = bad_videos(dir.path());
    let out = dir.path().join("out");
    let args = ["analyse", &truncated, "--calibration", &format!("{CLIP}/calibration.json"), "--out", out.to_str().unwrap()];
    for filter in ["debug", "opencv=debug"] {
        let run = touchmove(&args, Some(filter));
        assert_eq!(run.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(stderr.lines().any(|l| l.starts_with("error: ")), "{stderr}");
        assert!(stderr.lines().any(|l| !l.starts_with("error: ") && !l.contains("touchmove")), "RUST_LOG={filter}: FFmpeg's own lines too: {stderr}");
    }
}
