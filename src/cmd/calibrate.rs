//! `touchmove calibrate`: locate the board once and save where it is, which way round, and the
//! homography, as `calibration/NAME.json`; learn the set in front of the camera from the same
//! frame, as `calibration/NAME.set.json`.

use std::path::{Path, PathBuf};

use opencv::core::Vector;
use opencv::imgcodecs;
use opencv::prelude::MatTraitConst;
use shakmaty::Position;

use super::Exit;
use crate::board::{self, Calibration, Found, Layout, Px, WhiteEdge};
use crate::capture::{Capture, Source, Stills};
use crate::detect::{DEFAULT_MODEL, Model, SetCorrection};
use crate::photo::{self, PhotoError, locate, reference};

/// Arguments of `touchmove calibrate`.
#[derive(Debug, clap::Args)]
#[command(
    about = "Locate the board in a video, camera, stream, photo or folder of photos and save the calibration",
    long_about = "Finds the playing area in the first frames of SOURCE (an empty board or any position, \
no hands over it), works out which edge White sits at, and writes calibration/NAME.json: the \
corners a8, h8, h1, a1 in pixels, the homography to the top-down board, the image size, White's \
edge and the source. `analyse` and `live` read it.\n\n\
The corners are found automatically unless --corners gives them; corners given that miss the \
board's grid lines (marked on a printed border's outer edge, say) are moved onto them. White's edge is read from the \
known position (--fen, by default the start) where the frame shows it, else from the position \
the frame shows as `recognise` reads it (a game's armies, the light squares, printed \
coordinates), unless --white gives it (or --corners, whose order fixes it, unless the frame \
shows the known position turned: then the corners are turned, with a warning).\n\n\
The set in front of the camera is learnt from the same frame when it shows a known position \
(--fen, by default the start position): a small correction of the board model for these pieces \
under this light, kept only if squares held out of the fit read better with it, and saved as \
DIR/NAME.set.json, which `analyse` and `live` use (and learn again from the moved frame, against \
the position read by then, when the board moves in the image). When the position is known, it \
also settles which grid is the board and which way round it lies. A frame with hands over the board, or that \
does not show --fen, is refused, naming the squares (with the default start position: a warning, \
and no set). An empty board teaches nothing: no set is learnt.\n\n\
Exit codes: 0 saved, 1 no board found or the file could not be written, 2 bad arguments, a \
source that cannot be read, or a frame that does not show --fen.",
    after_help = "Examples:\n  touchmove calibrate ../shared/data/webcam-boards/emptyBoard001.avi --white left --name club-board-3\n  touchmove calibrate 0 --corners 132,89,492,90,497,451,122,462 --name camera0\n  touchmove calibrate 'game/*.jpg' --name game    (photos, in name order; quote the glob)"
)]
pub struct Args {
    /// A video file, a photo, a folder of photos or a quoted glob ('game/*.jpg'), a camera
    /// index (0, 1, ...) or a stream URL.
    #[arg(value_name = "SOURCE")]
    pub source: String,
    /// The playing area's corners a8, h8, h1, a1 in pixels: x,y,x,y,x,y,x,y.
    #[arg(long, value_name = "x,y,x,y,x,y,x,y", allow_hyphen_values = true)]
    pub corners: Option<String>,
    /// The edge of the image White sits at (otherwise read from the start position).
    #[arg(long, value_enum)]
    pub white: Option<WhiteEdge>,
    /// The calibration's name: the file is DIR/NAME.json (default: the source's file name).
    #[arg(long)]
    pub name: Option<String>,
    /// Where calibrations are kept.
    #[arg(long, value_name = "DIR", default_value = "calibration")]
    pub dir: PathBuf,
    /// How many frames from the start to search for the board.
    #[arg(long, default_value_t = 50)]
    pub frames: u64,
    /// Also write the warped, top-down board (a8 top-left) to this image, to check by eye.
    #[arg(long, value_name = "FILE.jpg")]
    pub preview: Option<PathBuf>,
    /// The position the frame shows, to learn the set from (default: the initial position).
    #[arg(long, value_name = "FEN")]
    pub fen: Option<String>,
    /// Do not learn the set: the shipped model alone reads the pieces.
    #[arg(long)]
    pub no_set: bool,
    /// The board model the set is learnt for (ONNX).
    #[arg(long, value_name = "FILE.onnx", default_value = DEFAULT_MODEL)]
    pub model: PathBuf,
}

/// Runs the command; prints the path of the calibration written.
pub fn run(args: &Args) -> Exit {
    let source: Source = args.source.parse().unwrap_or_else(|never| match never {});
    let given = match args.corners.as_deref().map(parse_corners).transpose() {
        Ok(c) => c,
        Err(e) => return Exit::BadInput(format!("--corners: {e}")),
    };
    let mut capture = match Capture::open(&source) {
        Ok(c) => c,
        Err(e) => return Exit::BadInput(e.to_string()),
    };
    let mut searched = 0;
    let (frame, found) = loop {
        let frame = match capture.next_frame() {
            Ok(Some(frame)) => frame,
            Ok(None) => return Exit::Failed(format!("{source}: no board found in its {searched} frame(s); give the corners with --corners")),
            Err(e) => return Exit::BadInput(e.to_string()),
        };
        searched += 1;
        if let Some(marked) = given {
            match board::corners::snap(&frame.image, marked) {
                Ok(corners) => break (frame, (corners, Found::Given)),
                Err(e) => return Exit::BadInput(format!("{source}, frame {}: --corners: {e}", frame.index)),
            }
        }
        // Every fifth frame: neighbouring frames of a still board add nothing.
        if frame.index % 5 == 0 {
            match board::corners::find(&frame.image) {
                Ok(Some(order)) => break (frame, (order, Found::Auto)),
                Ok(None) => {}
                Err(e) => return Exit::Failed(format!("{source}, frame {}: {e}", frame.index)),
            }
        }
        if searched >= args.frames {
            return Exit::Failed(format!("{source}: no board found in the first {searched} frames; give the corners with --corners"));
        }
    };
    let known = match super::start_position(args.fen.as_deref()) {
        Ok(position) => position.board().clone(),
        Err(e) => return Exit::BadInput(format!("--fen: {e}")),
    };
    let mut model = match args.no_set {
        true => None,
        false => match Model::load(&args.model, 2) {
            Ok(m) => Some(m),
            Err(e) => return Exit::Failed(e.to_string()),
        },
    };
    let located = match (&mut model, found.1, args.white) {
        (Some(model), Found::Auto, None) => match locate::locate_known(model, &frame.image, Some(found.0), &known) {
            Ok(l) if reference::check(&l.reading, &known).is_ok() => Some(l),
            _ => None,
        },
        // Corners given in the wrong order, on a frame that shows the position turned.
        (Some(model), Found::Given, _) => match locate::check_order(model, &frame.image, found.0, Some(&known)) {
            Ok((l, turns)) if turns != 0 && reference::check(&l.reading, &known).is_ok() => {
                tracing::warn!("--corners start at the wrong corner: the frame shows the position turned {turns} quarter turn(s), and the calibration is turned so");
                Some(l)
            }
            _ => None,
        },
        _ => None,
    };
    let (corners, white) = match found {
        _ if located.is_some() => {
            let l = located.as_ref().expect("just checked");
            tracing::info!("board and White's edge chosen by the position, {:.1}% sure among {} grids and turns", 100.0 * l.sure, l.tried);
            (l.corners, edge_of(&l.corners))
        }
        (corners, Found::Given) => {
            let from_corners = edge_of(&corners);
            if let Some(w) = args.white.filter(|w| *w != from_corners) {
                tracing::warn!("--white {w:?} ignored: the order of --corners puts White at the {from_corners:?} edge");
            }
            (corners, from_corners)
        }
        (order, Found::Auto) => match (&mut model, args.white) {
            (_, Some(white)) => (white.corners_from_image_order(order), white),
            // Not the known position: White's edge is the turn whose reading a game explains
            // best, as `recognise` chooses it.
            (Some(model), None) => match locate::locate_among(model, &frame.image, &[order], None) {
                Ok(l) => {
                    if photo::board_of(&l.reading).occupied().is_empty() {
                        tracing::warn!("no pieces to tell White's edge by: chosen by the light squares and any printed coordinates, {:.1}% sure (give --white)", 100.0 * l.sure);
                    } else {
                        tracing::info!("White's edge chosen by the position the frame shows, {:.1}% sure", 100.0 * l.sure);
                    }
                    (l.corners, edge_of(&l.corners))
                }
                Err(e) => return Exit::Failed(format!("{source}: {e}")),
            },
            // Without the model: the lighter of two bands of pieces.
            (None, None) => {
                let white = match board::orientation::white_edge(&frame.image, order) {
                    Ok(Some(w)) => w,
                    Ok(None) => {
                        tracing::warn!("no pieces to tell White's edge by; assuming the bottom (give --white)");
                        WhiteEdge::Bottom
                    }
                    Err(e) => return Exit::Failed(format!("{source}: {e}")),
                };
                (white.corners_from_image_order(order), white)
            }
        },
    };
    let size = [frame.image.cols() as u32, frame.image.rows() as u32];
    let cal = match Calibration::from_corners(source.to_string(), frame.index, size, corners, white, found.1) {
        Ok(cal) => cal,
        Err(e) => return Exit::BadInput(format!("{source}: {e}")),
    };
    let name = args.name.clone().unwrap_or_else(|| match &source {
        Source::File(p) => p.file_stem().map_or("board".into(), |s| s.to_string_lossy().into_owned()),
        Source::Camera(i) => format!("camera{i}"),
        Source::Url(_) => "stream".into(),
        Source::Stills(Stills::Folder(p)) => p.file_name().map_or("board".into(), |s| s.to_string_lossy().into_owned()),
        Source::Stills(Stills::Pattern(p)) => Path::new(p).parent().and_then(Path::file_name).map_or("board".into(), |s| s.to_string_lossy().into_owned()),
    });
    let path = args.dir.join(format!("{name}.json"));
    if let Err(e) = cal.save(&path) {
        return Exit::Failed(e.to_string());
    }
    if let Some(preview) = &args.preview {
        let written = cal
            .warp(&frame.image, Layout { square: 64, margin: 32 })
            .map_err(|e| e.to_string())
            .and_then(|img| imgcodecs::imwrite(preview, &img, &Vector::new()).map_err(|e| e.to_string()));
        if let Err(e) = written {
            return Exit::Failed(format!("{}: cannot write the preview: {e}", preview.display()));
        }
    }
    tracing::info!(frame = frame.index, ?white, found = ?cal.found, "calibrated");
    println!("{}", path.display());
    match model {
        Some(mut model) => learn_set(&mut model, &frame.image, &cal, &known, args.fen.is_some(), &path, format!("{source}, frame {}", frame.index)),
        None => Exit::Ok,
    }
}

/// Learns the set from the calibration's frame and saves it beside the calibration at `path`.
/// A frame that cannot teach it is refused when the position was given, and warned about when it
/// is only the default start.
fn learn_set(model: &mut Model, image: &opencv::core::Mat, cal: &Calibration, known: &shakmaty::Board, given: bool, path: &Path, reference: String) -> Exit {
    let started = std::time::Instant::now();
    let set_path = SetCorrection::path_beside(path);
    let learnt = match photo::recognise_with(model, image, cal.corners, true) {
        Ok(seen) if seen.board.occupied().is_empty() && known.occupied().count() > 0 => {
            tracing::warn!("the board is empty: no set learnt (calibrate again with the pieces set up to learn it)");
            return Exit::Ok;
        }
        Ok(_) => reference::learn(model, image, cal.corners, known, reference),
        Err(e) => Err(e),
    };
    match learnt {
        Ok(set) => {
            if let Err(e) = set.save(&set_path) {
                return Exit::Failed(e.to_string());
            }
            tracing::info!(seconds = started.elapsed().as_secs_f64(), "set learnt: {}", set.summary());
            println!("{}", set_path.display());
            Exit::Ok
        }
        Err(e @ (PhotoError::HandsOver(_) | PhotoError::NotThePosition(_))) if !given => {
            tracing::warn!("no set learnt: {e}");
            Exit::Ok
        }
        Err(e @ (PhotoError::HandsOver(_) | PhotoError::NotThePosition(_))) => Exit::BadInput(format!("{}: {e}", cal.source)),
        Err(e) => Exit::Failed(format!("{}: {e}", cal.source)),
    }
}

/// Parses `x,y,x,y,x,y,x,y`.
pub fn parse_corners(text: &str) -> Result<[Px; 4], String> {
    let numbers: Vec<f64> = text
        .split(',')
        .map(|s| s.trim().parse::<f64>().map_err(|_| format!("{s:?} is not a number")))
        .collect::<Result<_, _>>()?;
    // A corner may lie a little outside the image, where the board fills the frame.
    if numbers.len() != 8 || numbers.iter().any(|n| !n.is_finite()) {
        return Err(format!("expected 8 pixel coordinates (a8, h8, h1, a1 as x,y pairs), got {text:?}"));
    }
    Ok(std::array::from_fn(|i| Px { x: numbers[2 * i], y: numbers[2 * i + 1] }))
}

/// The image edge White sits at, given the corners a8, h8, h1, a1: where rank 1 is.
fn edge_of(corners: &[Px; 4]) -> WhiteEdge {
    let cx = corners.iter().map(|p| p.x).sum::<f64>() / 4.0;
    let cy = corners.iter().map(|p| p.y).sum::<f64>() / 4.0;
    let (dx, dy) = ((corners[2].x + corners[3].x) / 2.0 - cx, (corners[2].y + corners[3].y) / 2.0 - cy);
    match (dx.abs() > dy.abs(), dx > 0.0, dy > 0.0) {
        (true, true, _) => WhiteEdge::Right,
        (true, false, _) => WhiteEdge::Left,
        (false, _, true) => WhiteEdge::Bottom,
        (false, _, false) => WhiteEdge::Top,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corners_parse_and_fix_white_edge() {
        let c = parse_corners("132,89,492,90,497,451,122,462").unwrap();
        assert_eq!(c[3], Px { x: 122.0, y: 462.0 });
        assert_eq!(edge_of(&c), WhiteEdge::Bottom);
        // a8 bottom-left ... a1 bottom-right: White on the right.
        let c = parse_corners("0,100,0,0,100,0,100,100").unwrap();
        assert_eq!(edge_of(&c), WhiteEdge::Right);
        assert!(parse_corners("1,2,3").is_err());
        assert!(parse_corners("1,2,3,4,5,6,7,x").is_err());
    }
}
