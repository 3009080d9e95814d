//! `touchmove eval`: scores the pipeline's predictions on labelled clips, prints the Markdown
//! report, optionally writes it as JSON and Markdown with one PNG timeline per clip, and gates on
//! a thresholds file.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use opencv::prelude::MatTraitConst;
use shakmaty::{CastlingMode, Chess, Position};

use super::Exit;
use crate::board::{Calibration, Found, Px, WhiteEdge};
use crate::capture::{Capture, Source};
use crate::detect::{Model, SetCorrection};
use crate::eval::labels::{CalibrationSource, Labels};
use crate::eval::predicted::Predicted;
use crate::eval::report::{self, ClipReport, Totals};
use crate::eval::thresholds::Thresholds;
use crate::eval::{Tolerances, plot, score};
use crate::photo::{PhotoError, reference};
use crate::pipeline::{self, Config};
use crate::rules;

/// Arguments of `touchmove eval`.
#[derive(Debug, clap::Args)]
#[command(
    about = "Run the pipeline on labelled clips and score it: events, moves, hands, rulings, squares, speed",
    long_about = "Runs the pipeline (as `touchmove analyse`) on each labelled clip, or reads what an earlier run \
wrote (--predictions), and scores what it predicted for each labelled clip (fixtures/README.md describes the labels) \
against its labels: physical events (precision and recall per kind), the move sequence (exact match, first \
divergence, timing against the labelled windows), hands per move, rulings (precision and recall per article, \
and false accusations on their own line), per-frame squares, boards and hands, and speed. Prints the report as \
Markdown: a table per clip, per folder where the clips lie in more than one, and the total, each score with \
what it was computed from. A clip is named by its path under the folder given (clips/touch-own-4.3.1 in \
`touchmove eval fixtures/`); its outputs go to a subdirectory of that name.\n\n\
Exit codes: 0 scored (and every threshold met), 1 a threshold not met or an output not written, 2 bad input \
(the message names the file, line and field).",
    after_help = "Examples:\n  touchmove eval fixtures/clips --thresholds fixtures/eval-thresholds.json --plots eval-plots\n  touchmove eval fixtures/ --out out/eval\n  touchmove eval fixtures/clips --predictions out/ --json eval.json"
)]
pub struct Args {
    /// Labelled clips: a directory with a `labels.json`, or a directory searched for them.
    #[arg(value_name = "CLIP_OR_DIR", required = true)]
    pub clips: Vec<PathBuf>,
    /// Score an earlier run instead of running the pipeline: one subdirectory per clip, named
    /// by the clip's path under the folder given, holding `events.jsonl`, `rulings.jsonl`,
    /// `track.jsonl` and `summary.json` (as `touchmove analyse --out` writes).
    #[arg(long, value_name = "DIR", conflicts_with = "out")]
    pub predictions: Option<PathBuf>,
    /// Where the pipeline's outputs go, one subdirectory per clip, named as with --predictions
    /// (default: a temporary folder).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// The board model (ONNX).
    #[arg(long, value_name = "FILE.onnx", default_value = crate::detect::DEFAULT_MODEL)]
    pub model: PathBuf,
    /// Learn each clip's set from its first frame and labelled start position first, as
    /// `calibrate` does (a first frame that cannot teach it: a warning, and the shipped model).
    #[arg(long, conflicts_with = "predictions")]
    pub adapt: bool,
    /// Also write the report as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Also write the Markdown report to a file.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Write one PNG timeline per clip here (labels above, predictions below).
    #[arg(long, value_name = "DIR")]
    pub plots: Option<PathBuf>,
    /// Bounds on the total metrics (`touchmove-eval-thresholds/1`); exit 1 if one is not met.
    #[arg(long, value_name = "FILE")]
    pub thresholds: Option<PathBuf>,
    /// A predicted event matches a labelled one at most this many frames away.
    #[arg(long, default_value_t = 5, value_name = "FRAMES")]
    pub frame_tolerance: u64,
    /// Seconds by which move and ruling windows are widened on each side.
    #[arg(long, default_value_t = 1.0, value_name = "SECONDS")]
    pub time_tolerance: f64,
}

/// Runs the command, printing the Markdown report to `out`.
pub fn run(args: &Args, out: &mut impl Write) -> Exit {
    if !(args.time_tolerance.is_finite() && args.time_tolerance >= 0.0) {
        return Exit::BadInput(format!("--time-tolerance {}: must be a number of seconds, 0 or more", args.time_tolerance));
    }
    let tol = Tolerances { frames: args.frame_tolerance, seconds: args.time_tolerance };
    let thresholds = match args.thresholds.as_deref().map(Thresholds::load).transpose() {
        Ok(t) => t,
        Err(e) => return Exit::BadInput(e),
    };
    let found = match find_named_clips(&args.clips) {
        Ok(found) => found,
        Err(e) => return Exit::BadInput(e),
    };
    if let Some(dir) = &args.plots
        && let Err(e) = std::fs::create_dir_all(dir)
    {
        return Exit::Failed(format!("{}: cannot create: {e}", dir.display()));
    }
    let out_root = args.out.clone().unwrap_or_else(|| std::env::temp_dir().join(format!("touchmove-eval-{}", std::process::id())));
    let mut clips: Vec<ClipReport> = Vec::new();
    for FoundClip { dir, name } in &found {
        let labels = match Labels::load(dir) {
            Ok(l) => l,
            Err(e) => return Exit::BadInput(e),
        };
        let (pred_dir, predicted) = match &args.predictions {
            Some(root) => {
                let dir = root.join(name);
                (dir.clone(), predictions(&dir))
            }
            None => {
                match analyse(&labels, dir, &out_root.join(name), &args.model, args.adapt) {
                    Ok(p) => (out_root.join(name), Ok(p)),
                    Err(e) => return Exit::Failed(e),
                }
            }
        };
        let predicted = match predicted {
            Ok(p) => p,
            Err(e) => return Exit::BadInput(e),
        };
        if let Some(plots) = &args.plots {
            let png = plots.join(format!("{name}.png"));
            if let Some(parent) = png.parent()
                && let Err(e) = std::fs::create_dir_all(parent)
            {
                return Exit::Failed(format!("{}: cannot create: {e}", parent.display()));
            }
            if let Err(e) = plot::timeline(name, &labels, &predicted, tol, &png) {
                return Exit::Failed(format!("cannot draw the timeline: {e}"));
            }
        }
        clips.push(ClipReport {
            name: name.clone(),
            labels_format: labels.format.as_str(),
            video: labels.video.display().to_string(),
            predictions: pred_dir.display().to_string(),
            scores: score(&labels, &predicted, tol),
        });
    }
    let failures = thresholds.map(|t| t.check(&Totals::of(&clips).metrics(tol)));
    let markdown = report::to_markdown(&clips, tol, failures.as_deref());
    if let Err(e) = out.write_all(markdown.as_bytes()).and_then(|()| out.flush()) {
        return Exit::Failed(format!("cannot write the report: {e}"));
    }
    if let Some(path) = &args.markdown
        && let Err(e) = std::fs::write(path, &markdown)
    {
        return Exit::Failed(format!("{}: cannot write: {e}", path.display()));
    }
    if let Some(path) = &args.json {
        let json = report::to_json(&clips, tol, failures.as_deref());
        let text = serde_json::to_string_pretty(&json).expect("a report always serialises");
        if let Err(e) = std::fs::write(path, text + "\n") {
            return Exit::Failed(format!("{}: cannot write: {e}", path.display()));
        }
    }
    match failures {
        Some(f) if !f.is_empty() => Exit::Failed(format!("{} threshold(s) not met: {}", f.len(), f.join("; "))),
        _ => Exit::Ok,
    }
}

/// Where the board of the labelled clip in `dir` is: its calibration file, or its labelled
/// corners.
pub fn calibration(labels: &Labels, dir: &Path) -> Result<Calibration, String> {
    let video = &labels.video;
    match &labels.calibration {
        Some(CalibrationSource::File(path)) => Calibration::load(path).map_err(|e| e.to_string()),
        Some(CalibrationSource::Corners(c)) => {
            let size = image_size(&Source::recording(video))?;
            let corners = c.map(|[x, y]| Px { x, y });
            Calibration::from_corners(video.display().to_string(), 0, size, corners, WhiteEdge::Bottom, Found::Given).map_err(|e| format!("{}: corners: {e}", dir.display()))
        }
        None => Err(format!("{}: no calibration or corners in the labels (finding the board in a clip is `touchmove calibrate`'s job: run it and name the file)", dir.display())),
    }
}

/// The set learnt from the first frame of `video`, which shows `board`; `None` (with a warning)
/// where that frame cannot teach it.
fn learn_set(video: &Path, calibration: &Calibration, board: &shakmaty::Board, model: &Path) -> Result<Option<SetCorrection>, String> {
    let mut capture = Capture::open(&Source::recording(video)).map_err(|e| e.to_string())?;
    let frame = capture.next_frame().map_err(|e| e.to_string())?.ok_or("no frame to learn the set from")?;
    let mut model = Model::load(model, 2).map_err(|e| e.to_string())?;
    let cal = calibration.at_size([frame.image.cols() as u32, frame.image.rows() as u32]).map_err(|e| e.to_string())?;
    match reference::learn(&mut model, &frame.image, cal.corners, board, format!("{}, frame 0", video.display())) {
        Ok(set) => Ok(Some(set)),
        Err(e @ (PhotoError::HandsOver(_) | PhotoError::NotThePosition(_))) => {
            tracing::warn!("{}: no set learnt: {e}", video.display());
            Ok(None)
        }
        Err(e) => Err(e.to_string()),
    }
}

/// Runs the pipeline on one labelled clip (in `dir`) into `out`, as `touchmove analyse` would,
/// and reads back what it wrote. The clip's spoken declarations ("j'adoube", which no camera
/// sees) are taken from its labelled `adjust` events, standing for an audio channel.
fn analyse(labels: &Labels, dir: &Path, out: &Path, model: &Path, adapt: bool) -> Result<Predicted, String> {
    let video = labels.video.clone();
    let calibration = calibration(labels, dir)?;
    let start = labels.fen.clone().into_position::<Chess>(CastlingMode::Standard).map_err(|e| format!("{}: fen: {e}", dir.display()))?;
    let set = if adapt { learn_set(&video, &calibration, start.board(), model).map_err(|e| format!("{}: {e}", dir.display()))? } else { None };
    let config = Config {
        set,
        rules: rules::Options { clock: false, declarations: true, ..rules::Options::default() },
        declarations: labels.declarations.clone(),
        ..Config::offline(Source::recording(&video), calibration, model.to_owned(), start, out.to_owned())
    };
    pipeline::run(&config, Arc::new(AtomicBool::new(false)), &mut |_| {}).map_err(|e| format!("{}: {e}", dir.display()))?;
    Predicted::load(out)
}

/// Width and height of a recording's frames: its first frame's.
fn image_size(source: &Source) -> Result<[u32; 2], String> {
    let first = Capture::open(source).and_then(|mut c| c.next_frame()).map_err(|e| e.to_string())?;
    let size = first.and_then(|f| f.image.size().ok()).filter(|s| s.width > 0 && s.height > 0);
    let size = size.ok_or_else(|| format!("{source}: no frame to read"))?;
    Ok([size.width as u32, size.height as u32])
}

/// The predictions of one clip: the output directory of an earlier `touchmove analyse`.
fn predictions(dir: &Path) -> Result<Predicted, String> {
    if !dir.is_dir() {
        return Err(format!("{}: no predictions for this clip (expected the output directory of `touchmove analyse`)", dir.display()));
    }
    Predicted::load(dir)
}

/// A labelled clip found by [`find_named_clips`]: its directory, and the name its predictions
/// and its section of the report go by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoundClip {
    /// The clip's directory (it holds `labels.json`).
    pub dir: PathBuf,
    /// Its path under the directory it was found in, `/` between the parts (`clips/touch-own`),
    /// or its directory's name where it was given itself.
    pub name: String,
}

/// The labelled clip directories named by `paths`: each path is a clip (it holds `labels.json`)
/// or a directory searched for clips at any depth. Sorted, each once.
pub fn find_clips(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    Ok(find_named_clips(paths)?.into_iter().map(|c| c.dir).collect())
}

/// The labelled clips named by `paths` (as [`find_clips`]), each named by its path under the path
/// it was found in, so that `fixtures/` holds `clips/adjust-declared` and
/// `variants/adjust-declared`. Sorted by directory, each once; two clips of one name (the same
/// clip name under two paths given) are an error, since their predictions would share a folder.
pub fn find_named_clips(paths: &[PathBuf]) -> Result<Vec<FoundClip>, String> {
    let mut found: Vec<FoundClip> = Vec::new();
    for path in paths {
        if !path.is_dir() {
            return Err(format!("{}: not a directory", path.display()));
        }
        let mut dirs = Vec::new();
        walk(path, &mut dirs)?;
        if dirs.is_empty() {
            return Err(format!("{}: no labelled clip (no labels.json) in it", path.display()));
        }
        for dir in dirs {
            if found.iter().any(|c| c.dir == dir) {
                continue;
            }
            let name = clip_name(path, &dir)?;
            if let Some(other) = found.iter().find(|c| c.name == name) {
                return Err(format!(
                    "{} and {} are both named {name:?} (their predictions would share a folder): give the folder that holds both",
                    other.dir.display(),
                    dir.display()
                ));
            }
            found.push(FoundClip { dir, name });
        }
    }
    found.sort_by(|a, b| a.dir.cmp(&b.dir));
    Ok(found)
}

/// The name of the clip in `dir`, found under `root`: its path under `root`, or, where `root` is
/// the clip itself, its directory's name.
fn clip_name(root: &Path, dir: &Path) -> Result<String, String> {
    let utf8 = |p: &Path| p.to_str().map(str::to_owned).ok_or_else(|| format!("{}: a clip directory needs a UTF-8 name", dir.display()));
    let under = dir.strip_prefix(root).unwrap_or(dir);
    let parts: Vec<String> = under.components().map(|c| utf8(Path::new(c.as_os_str()))).collect::<Result<_, _>>()?;
    if !parts.is_empty() {
        return Ok(parts.join("/"));
    }
    let own = dir.canonicalize().map_err(|e| format!("{}: {e}", dir.display()))?;
    own.file_name().map(|n| utf8(Path::new(n))).unwrap_or_else(|| Err(format!("{}: a clip directory needs a name", dir.display())))
}

fn walk(dir: &Path, found: &mut Vec<PathBuf>) -> Result<(), String> {
    let labels = dir.join("labels.json");
    if labels.is_file() {
        // A list is a folder of labelled photos (`eval-photos`), not a clip.
        let photos = std::fs::read_to_string(&labels).is_ok_and(|t| t.trim_start().starts_with('['));
        if !photos {
            found.push(dir.to_path_buf());
        }
        return Ok(());
    }
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: cannot list: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: cannot list: {e}", dir.display()))?.path();
        if path.is_dir() {
            walk(&path, found)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A clip directory (a `labels.json` holding an object) at `root/rel`.
    fn clip(root: &Path, rel: &str) {
        let dir = root.join(rel);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("labels.json"), "{}").unwrap();
    }

    #[test]
    fn a_recording_of_photos_has_its_first_photos_size() {
        let scratch = tempfile::Builder::new().prefix("touchmove-size-").tempdir().unwrap();
        for name in ["0000.jpg", "0001.jpg"] {
            image::RgbImage::new(24, 16).save(scratch.path().join(name)).unwrap();
        }
        std::fs::write(scratch.path().join("labels.json"), "{}").unwrap();
        let glob = Source::recording(&scratch.path().join("*.jpg"));
        assert!(matches!(glob, Source::Stills(_)));
        assert_eq!(image_size(&glob).unwrap(), [24, 16]);
        let none = Source::recording(&scratch.path().join("*.png"));
        assert!(image_size(&none).unwrap_err().contains("no photos"));
    }

    #[test]
    fn clips_are_named_by_their_path_under_the_folder_given() {
        let scratch = tempfile::Builder::new().prefix("touchmove-find-").tempdir().unwrap();
        let root = scratch.path();
        clip(root, "clips/adjust-declared");
        clip(root, "variants/adjust-declared");
        clip(root, "real/game/board-3");
        // A folder of labelled photos is no clip.
        std::fs::create_dir_all(root.join("photos")).unwrap();
        std::fs::write(root.join("photos/labels.json"), "[]").unwrap();

        let names = |paths: &[PathBuf]| find_named_clips(paths).map(|found| found.into_iter().map(|c| c.name).collect::<Vec<_>>());
        assert_eq!(names(&[root.to_path_buf()]).unwrap(), ["clips/adjust-declared", "real/game/board-3", "variants/adjust-declared"]);
        // A folder of clips names them as before; a clip given itself goes by its own name.
        assert_eq!(names(&[root.join("clips")]).unwrap(), ["adjust-declared"]);
        assert_eq!(names(&[root.join("real/game/board-3"), root.join("clips")]).unwrap(), ["adjust-declared", "board-3"]);
        // The same clip reached twice is one clip.
        assert_eq!(names(&[root.to_path_buf(), root.join("clips")]).unwrap(), ["clips/adjust-declared", "real/game/board-3", "variants/adjust-declared"]);
        // Two clips that would share a predictions folder are refused, naming both.
        let err = names(&[root.join("clips"), root.join("variants")]).unwrap_err();
        assert!(err.contains("both named \"adjust-declared\"") && err.contains("variants"), "{err}");
        assert_eq!(find_clips(&[root.join("clips")]).unwrap(), [root.join("clips/adjust-declared")]);
    }
}
