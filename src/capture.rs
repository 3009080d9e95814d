//! Reading frames: video files, still images, cameras by index and network streams, through
//! OpenCV, and series of photos (a folder or a glob, [`Stills`]); and the capture thread, which
//! blocks when the pipeline is behind (offline, nothing is lost) or drops the oldest frame and
//! counts it (live, latency first).

mod stills;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, TrySendError};
use opencv::core::Mat;
use opencv::prelude::*;
use opencv::{imgcodecs, videoio};
pub use stills::{ORDER_INTERVAL_S, Stills, StillsError};

/// Where frames come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// A video file, or a still image (`.jpg`, `.png`, ...), read as one frame.
    File(PathBuf),
    /// A camera, by OpenCV's index.
    Camera(i32),
    /// A network stream (`rtsp://`, `http://`, ...).
    Url(String),
    /// A series of photos, one frame each, in natural name order: a folder, or a glob such as
    /// `game/*.jpg`.
    Stills(Stills),
}

impl std::str::FromStr for Source {
    type Err = std::convert::Infallible;

    /// A number is a camera index, anything with `://` a URL, everything else a recording
    /// (see [`Source::recording`]).
    fn from_str(s: &str) -> Result<Source, Self::Err> {
        Ok(if let Ok(index) = s.parse::<i32>() {
            Source::Camera(index)
        } else if s.contains("://") {
            Source::Url(s.to_string())
        } else {
            Source::recording(Path::new(s))
        })
    }
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::File(p) => write!(f, "{}", p.display()),
            Source::Camera(i) => write!(f, "camera {i}"),
            Source::Url(u) => f.write_str(u),
            Source::Stills(s) => write!(f, "{s}"),
        }
    }
}

impl Source {
    /// A recording at `path`: a folder is a series of photos, and so is a glob (a path with
    /// `*`, `?` or `[` that names no file); anything else is a video or photo file.
    pub fn recording(path: &Path) -> Source {
        if path.is_dir() {
            return Source::Stills(Stills::Folder(path.to_owned()));
        }
        match path.to_str() {
            Some(pattern) if pattern.contains(['*', '?', '[']) && !path.exists() => Source::Stills(Stills::Pattern(pattern.to_owned())),
            _ => Source::File(path.to_owned()),
        }
    }

    /// Whether frames arrive in real time (a camera or a stream), not from files.
    pub fn is_live(&self) -> bool {
        matches!(self, Source::Camera(_) | Source::Url(_))
    }

    fn is_still_image(&self) -> bool {
        let Source::File(p) = self else { return false };
        let ext = p.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
        matches!(ext.as_deref(), Some("jpg" | "jpeg" | "png" | "bmp" | "tif" | "tiff" | "webp"))
    }
}

/// One frame from a source.
#[derive(Debug)]
pub struct Frame {
    /// 0 for the first frame read.
    pub index: u64,
    /// Seconds, increasing from one frame to the next, at no set rate: for video files, the
    /// video's timestamp, or the frame's place at the file's rate where the timestamps do not
    /// move forward; for a series of photos, the capture time after the first photo's, or
    /// [`ORDER_INTERVAL_S`] a photo (seconds or minutes apart: nothing here assumes a video's
    /// rate); for live sources, since the capture began.
    pub t: f64,
    /// The image, BGR.
    pub image: Mat,
    /// When it was read from the source (for latency).
    pub at: Instant,
}

/// What can go wrong reading frames.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    /// The source could not be opened.
    #[error("{from}: cannot open (not a video, image, camera or stream OpenCV can read)")]
    Open {
        /// The source.
        from: Source,
    },
    /// OpenCV failed while reading.
    #[error("{from}, frame {frame}: {error}")]
    Read {
        /// The source.
        from: Source,
        /// The frame being read.
        frame: u64,
        /// OpenCV's error.
        error: opencv::Error,
    },
    /// A series of photos could not be listed, or one of them read.
    #[error(transparent)]
    Stills(#[from] StillsError),
}

/// An open source.
pub struct Capture {
    source: Source,
    reader: Reader,
    index: u64,
    started: Instant,
    paced: bool,
}

enum Reader {
    Video {
        cap: videoio::VideoCapture,
        /// The frame rate a file states, where it is believable (see [`MAX_FPS`]).
        rate: Option<f64>,
        /// The timestamp of the last frame read.
        last_t: f64,
    },
    Still(Option<Mat>),
    Stills(stills::Reader),
}

/// A file stating more frames a second than this states no rate: raw streams without a
/// container (an MJPEG or H.264 elementary stream) come with a placeholder of a million or more.
const MAX_FPS: f64 = 300.0;
/// The rate a file without a believable one is timed at.
const ASSUMED_FPS: f64 = 30.0;

impl Capture {
    /// Opens `source`.
    pub fn open(source: &Source) -> Result<Capture, CaptureError> {
        let reader = match source {
            Source::Stills(stills) => Reader::Stills(stills::Reader::open(stills)?),
            Source::File(path) if source.is_still_image() => {
                let image = imgcodecs::imread(path, imgcodecs::IMREAD_COLOR).map_err(|_| CaptureError::Open { from: source.clone() })?;
                if image.empty() {
                    return Err(CaptureError::Open { from: source.clone() });
                }
                Reader::Still(Some(image))
            }
            Source::File(path) => video(source, open_video(path))?,
            Source::Camera(index) => video(source, videoio::VideoCapture::new(*index, videoio::CAP_ANY))?,
            Source::Url(url) => video(source, open_video(url))?,
        };
        Ok(Capture { source: source.clone(), reader, index: 0, started: Instant::now(), paced: false })
    }

    /// Plays a file in real time, each frame no sooner than its timestamp after the first
    /// read: a recording standing in for a live camera (benchmarks of latency).
    pub fn paced(self) -> Capture {
        Capture { paced: true, ..self }
    }

    /// The source being read.
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// The next frame, or `None` at the end of a file.
    pub fn next_frame(&mut self) -> Result<Option<Frame>, CaptureError> {
        let index = self.index;
        let (image, t) = match &mut self.reader {
            Reader::Still(image) => match image.take() {
                Some(image) => (image, 0.0),
                None => return Ok(None),
            },
            Reader::Stills(photos) => match photos.next(index) {
                Some(photo) => photo?,
                None => return Ok(None),
            },
            Reader::Video { cap, rate, last_t } => {
                let mut image = Mat::default();
                let read = cap.read(&mut image).map_err(|error| CaptureError::Read { from: self.source.clone(), frame: index, error })?;
                if !read || image.empty() {
                    return Ok(None);
                }
                let t = if self.source.is_live() {
                    self.started.elapsed().as_secs_f64()
                } else {
                    // The container's timestamp where it moves forward (variable frame rates),
                    // else the frame's place at the stated rate (some streams give 0 throughout).
                    let counted = index as f64 / rate.unwrap_or(ASSUMED_FPS);
                    let stamped = cap.get(videoio::CAP_PROP_POS_MSEC).unwrap_or(f64::NAN) / 1000.0;
                    let believable = rate.is_some() && stamped.is_finite() && stamped >= 0.0 && (index == 0 || stamped > *last_t);
                    if believable { stamped } else { counted.max(*last_t + 1.0 / MAX_FPS) }
                };
                *last_t = t;
                (image, t)
            }
        };
        if index == 0 {
            self.started = Instant::now();
        }
        if self.paced
            && let Some(wait) = Duration::from_secs_f64(t.max(0.0)).checked_sub(self.started.elapsed())
        {
            std::thread::sleep(wait);
        }
        self.index += 1;
        Ok(Some(Frame { index, t, image, at: Instant::now() }))
    }
}

/// Opens a video file or a stream URL with OpenCV's FFmpeg backend, where it has one, else with
/// the first backend that reads it. Only FFmpeg is tried where it is there: GStreamer, which
/// OpenCV would try after it, cannot read what FFmpeg could not, and says so on the terminal
/// in assertions of its own (and again each second a stream is reconnected).
pub fn open_video(path: impl AsRef<std::ffi::OsStr>) -> opencv::Result<videoio::VideoCapture> {
    let ffmpeg = videoio::has_backend(videoio::VideoCaptureAPIs::CAP_FFMPEG).unwrap_or(false);
    videoio::VideoCapture::from_file(path, if ffmpeg { videoio::CAP_FFMPEG } else { videoio::CAP_ANY })
}

/// The reader of a video, camera or stream OpenCV `opened`, with the rate it states where that
/// is believable.
fn video(source: &Source, opened: opencv::Result<videoio::VideoCapture>) -> Result<Reader, CaptureError> {
    let fail = || CaptureError::Open { from: source.clone() };
    let cap = opened.map_err(|_| fail())?;
    if !cap.is_opened().map_err(|_| fail())? {
        return Err(fail());
    }
    let stated = cap.get(videoio::CAP_PROP_FPS).unwrap_or(0.0);
    let rate = (stated.is_finite() && (1.0..=MAX_FPS).contains(&stated)).then_some(stated);
    if rate.is_none() && !source.is_live() {
        tracing::warn!(
            "{source}: the file states no believable frame rate ({stated}); its frames are timed at {ASSUMED_FPS} a second \
             (put it in a container with its real rate to fix: ffmpeg -r RATE -i FILE -c copy OUT.mkv)"
        );
    }
    Ok(Reader::Video { cap, rate, last_t: f64::NEG_INFINITY })
}

/// What happens when the pipeline falls behind the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Wait for the pipeline: nothing is dropped (files).
    Block,
    /// Drop the oldest queued frame and count it (cameras and streams).
    DropOldest,
}

/// The capture thread's handle: frames arrive on `frames` until the source ends or `stop` is
/// set.
pub struct Running {
    /// The frames, in order.
    pub frames: Receiver<Frame>,
    /// Frames dropped because the pipeline was behind.
    pub dropped: Arc<AtomicU64>,
    /// Times a live source that failed was reopened.
    pub reconnects: Arc<AtomicU64>,
    /// Set to stop capturing.
    pub stop: Arc<AtomicBool>,
    /// The thread; its result says how the capture ended.
    pub thread: JoinHandle<Result<(), CaptureError>>,
}

/// Starts a capture thread on `capture`, queueing at most `capacity` frames. Live sources
/// that fail are reopened, once a second, until `stop` is set.
pub fn spawn(mut capture: Capture, policy: Policy, capacity: usize) -> Running {
    let (tx, rx) = crossbeam_channel::bounded::<Frame>(capacity.max(1));
    let dropped = Arc::new(AtomicU64::new(0));
    let reconnects = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    // Only a dropping capture holds the queue's other end: a blocking one must see the queue
    // disconnected when the next stage stops (an error there), or it would wait on a full queue
    // for ever.
    let drain = (policy == Policy::DropOldest).then(|| rx.clone());
    let (count, reopened, halt) = (dropped.clone(), reconnects.clone(), stop.clone());
    let thread = std::thread::Builder::new()
        .name("capture".into())
        .spawn(move || {
            while !halt.load(Ordering::Relaxed) {
                let frame = match capture.next_frame() {
                    Ok(Some(frame)) => frame,
                    Ok(None) if !capture.source().is_live() => return Ok(()),
                    // A file does not come back: its error ends the capture, at its frame.
                    Err(e) if !capture.source().is_live() => return Err(e),
                    result => {
                        if let Err(e) = result {
                            tracing::warn!("{e}; reconnecting");
                        } else {
                            tracing::warn!("{}: no frame; reconnecting", capture.source());
                        }
                        std::thread::sleep(Duration::from_secs(1));
                        match Capture::open(capture.source()) {
                            Ok(fresh) => {
                                reopened.fetch_add(1, Ordering::Relaxed);
                                capture = Capture { index: capture.index, started: capture.started, paced: capture.paced, ..fresh };
                            }
                            Err(e) => tracing::warn!("{e}"),
                        }
                        continue;
                    }
                };
                let mut frame = frame;
                loop {
                    match policy {
                        Policy::Block => {
                            if tx.send(frame).is_err() {
                                return Ok(());
                            }
                            break;
                        }
                        Policy::DropOldest => match tx.try_send(frame) {
                            Ok(()) => break,
                            Err(TrySendError::Full(back)) => {
                                if let Some(drain) = &drain
                                    && drain.try_recv().is_ok()
                                {
                                    count.fetch_add(1, Ordering::Relaxed);
                                }
                                frame = back;
                            }
                            Err(TrySendError::Disconnected(_)) => return Ok(()),
                        },
                    }
                }
            }
            Ok(())
        })
        .expect("the capture thread starts");
    Running { frames: rx, dropped, reconnects, stop, thread }
}

#[cfg(test)]
mod tests {
    use opencv::core::{Scalar, Size};

    use super::*;

    /// A clip of 12 frames at 10 a second in the temporary folder, `name` telling the container
    /// (`.avi`, or `.mjpeg` for none), opened.
    fn clip(name: &str) -> (PathBuf, Capture) {
        let path = std::env::temp_dir().join(format!("touchmove-{}-{name}", std::process::id()));
        let fourcc = videoio::VideoWriter::fourcc('M', 'J', 'P', 'G').unwrap();
        let mut w = videoio::VideoWriter::new(path.to_str().unwrap(), fourcc, 10.0, Size::new(64, 48), true).unwrap();
        for i in 0..12 {
            let img = Mat::new_rows_cols_with_default(48, 64, opencv::core::CV_8UC3, Scalar::all(f64::from(i * 10))).unwrap();
            w.write(&img).unwrap();
        }
        w.release().unwrap();
        let capture = Capture::open(&Source::File(path.clone())).unwrap();
        (path, capture)
    }

    #[test]
    fn sources_parse() {
        assert_eq!("0".parse::<Source>().unwrap(), Source::Camera(0));
        assert_eq!("rtsp://cam/1".parse::<Source>().unwrap(), Source::Url("rtsp://cam/1".into()));
        assert_eq!("game.mp4".parse::<Source>().unwrap(), Source::File("game.mp4".into()));
    }

    #[test]
    fn folders_and_globs_are_series_of_photos() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().to_str().unwrap();
        assert_eq!(folder.parse::<Source>().unwrap(), Source::Stills(Stills::Folder(dir.path().into())));
        let pattern = format!("{folder}/img?.jpg");
        assert_eq!(pattern.parse::<Source>().unwrap(), Source::Stills(Stills::Pattern(pattern.clone())));
        assert_eq!("game/[0-9]*.png".parse::<Source>().unwrap(), Source::Stills(Stills::Pattern("game/[0-9]*.png".into())));
        // A file whose name holds a glob's character is that file.
        let odd = dir.path().join("round[1].mp4");
        std::fs::write(&odd, b"").unwrap();
        assert_eq!(odd.to_str().unwrap().parse::<Source>().unwrap(), Source::File(odd.clone()));
        assert!(!Source::Stills(Stills::Folder(dir.path().into())).is_live());
    }

    #[test]
    fn a_photo_that_cannot_be_read_ends_the_capture_at_its_frame() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["1.png", "2.png"] {
            image::RgbImage::new(8, 8).save(dir.path().join(name)).unwrap();
        }
        std::fs::write(dir.path().join("3.png"), b"a note, not a photo").unwrap();
        let source = Source::Stills(Stills::Folder(dir.path().into()));
        let running = spawn(Capture::open(&source).unwrap(), Policy::Block, 2);
        let frames: Vec<(u64, f64)> = running.frames.iter().map(|f| (f.index, f.t)).collect();
        assert_eq!(frames, [(0, 0.0), (1, ORDER_INTERVAL_S)]);
        let err = running.thread.join().unwrap().unwrap_err();
        assert!(matches!(err, CaptureError::Stills(StillsError::Decode { frame: 2, .. })), "{err}");
        assert!(err.to_string().contains("3.png, frame 2: not a photo"), "{err}");
    }

    #[test]
    fn an_empty_folder_cannot_be_opened() {
        let dir = tempfile::tempdir().unwrap();
        let err = Capture::open(&Source::Stills(Stills::Folder(dir.path().into()))).err().expect("no photos");
        assert!(err.to_string().starts_with(&format!("{}: no photos", dir.path().display())), "{err}");
    }

    #[test]
    fn a_file_is_read_whole_in_order_with_times() {
        let (path, capture) = clip("capture.avi");
        let running = spawn(capture, Policy::Block, 2);
        let frames: Vec<Frame> = running.frames.iter().collect();
        running.thread.join().unwrap().unwrap();
        assert_eq!(frames.len(), 12);
        assert!(frames.windows(2).all(|w| w[1].index == w[0].index + 1 && w[1].t > w[0].t), "{:?}", frames.iter().map(|f| f.t).collect::<Vec<_>>());
        assert!((frames[10].t - 1.0).abs() < 1e-6);
        std::fs::remove_file(path).ok();
    }

    #[test]
    fn a_slow_pipeline_loses_the_oldest_frames_when_live() {
        let (path, capture) = clip("drop.avi");
        let running = spawn(capture, Policy::DropOldest, 3);
        running.thread.join().unwrap().unwrap();
        let kept: Vec<u64> = running.frames.try_iter().map(|f| f.index).collect();
        assert_eq!(kept, [9, 10, 11]);
        assert_eq!(running.dropped.load(Ordering::Relaxed), 9);
        std::fs::remove_file(path).ok();
    }

    #[test]
    fn a_raw_stream_without_a_stated_rate_is_timed_at_the_assumed_rate() {
        // An MJPEG elementary stream: no container, so no rate and no timestamps.
        let (path, mut capture) = clip("raw.mjpeg");
        let mut times = Vec::new();
        while let Some(frame) = capture.next_frame().unwrap() {
            times.push(frame.t);
        }
        assert_eq!(times.len(), 12);
        let step = 1.0 / ASSUMED_FPS;
        assert!(times.iter().enumerate().all(|(i, &t)| (t - i as f64 * step).abs() < 1e-9), "{times:?}");
        std::fs::remove_file(path).ok();
    }

    #[test]
    fn a_blocking_capture_stops_when_the_next_stage_hangs_up() {
        let (path, capture) = clip("hangup.avi");
        let running = spawn(capture, Policy::Block, 2);
        let first = running.frames.recv().unwrap();
        assert_eq!(first.index, 0);
        // The next stage fails and drops its end of the queue, which is full.
        drop(running.frames);
        let (done, ended) = crossbeam_channel::bounded(1);
        std::thread::spawn(move || done.send(running.thread.join().is_ok()).ok());
        assert_eq!(ended.recv_timeout(Duration::from_secs(10)), Ok(true), "the capture thread ends");
        std::fs::remove_file(path).ok();
    }

    #[test]
    fn a_missing_file_names_itself() {
        let err = Capture::open(&Source::File("no/such/clip.avi".into())).err().expect("cannot open");
        assert!(err.to_string().starts_with("no/such/clip.avi: cannot open"), "{err}");
    }
}
