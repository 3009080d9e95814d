//! `touchmove recognise`: the position on a still photo, as FEN.

use std::path::{Path, PathBuf};

use opencv::imgcodecs;
use opencv::prelude::MatTraitConst;
use shakmaty::Position;

use super::Exit;
use crate::board::{self, WhiteEdge};
use crate::detect::{DEFAULT_MODEL, Model};
use crate::photo::{self, Orientation, PhotoError, locate, reference};

/// Arguments of `touchmove recognise`.
#[derive(Debug, clap::Args)]
#[command(
    about = "Print the position on a photo of a board, as FEN",
    long_about = "Reads the position on a still photo of a chess board and prints the board part of its FEN.\n\n\
With --corners (the playing area's corners a8, h8, h1, a1 in pixels) the board is given and \
checked: corners that miss the board's grid lines (marked on a printed border's outer edge, say) \
are moved onto them, and a list that starts at the wrong corner (a dark square at White's \
right, pawns on the first rank) is turned, with a warning. Without, the board is found \
automatically and its orientation chosen by the position that best explains what the model \
reads: one king a side, no pawn on the first or last rank, White's army nearer White's edge \
(right for games; give --white for studies), a light square at each player's right (Law 2.1), \
and the coordinates printed around the board, where it has them. With --white, the board is \
found and White's edge given: for a position that cannot tell it, such as a pawnless endgame on \
a board without printed coordinates.\n\n\
With --reference, the set is learnt first from another photo of the same set under the same light \
whose position is known (--reference-fen, by default the start position), as `calibrate` does: the \
reference's board and orientation are found by that position. A reference with hands over the board \
or that does not show its position is refused, naming the squares.\n\n\
Exit codes: 0 read, 1 no board found or the model failed, 2 an unreadable image, bad arguments or \
a refused reference.",
    after_help = "Examples:\n  touchmove recognise board.jpg\n  touchmove recognise board.jpg --corners 213,529,754,480,780,1067,120,1047 --verbose\n  \
touchmove recognise endgame.jpg --white left    (White sits at the photo's left edge)\n  \
touchmove recognise move-31.jpg --reference start.jpg    (the same set, set up for the start)"
)]
pub struct Args {
    /// The photo (JPEG, PNG, ...).
    #[arg(value_name = "IMAGE")]
    pub image: PathBuf,
    /// The playing area's corners a8, h8, h1, a1 in pixels: x,y,x,y,x,y,x,y.
    #[arg(long, value_name = "x,y,x,y,x,y,x,y", allow_hyphen_values = true)]
    pub corners: Option<String>,
    /// The edge of the photo White sits at: the board is found, and its orientation given (for a
    /// position that cannot tell it, such as a pawnless endgame on a board without coordinates).
    #[arg(long, value_enum, conflicts_with = "corners")]
    pub white: Option<WhiteEdge>,
    /// The board model (ONNX).
    #[arg(long, value_name = "FILE.onnx", default_value = DEFAULT_MODEL)]
    pub model: PathBuf,
    /// A photo of the same set whose position is known, to learn the set from first.
    #[arg(long, value_name = "IMAGE")]
    pub reference: Option<PathBuf>,
    /// The position the reference shows (default: the initial position).
    #[arg(long, value_name = "FEN", requires = "reference")]
    pub reference_fen: Option<String>,
    /// Also print, per square, the model's confidence where it is below 0.9, and the corners.
    #[arg(long)]
    pub verbose: bool,
}

/// Runs the command: prints the FEN's board part on stdout.
pub fn run(args: &Args, out: &mut impl std::io::Write) -> Exit {
    let corners = match args.corners.as_deref().map(super::calibrate::parse_corners).transpose() {
        Ok(c) => c,
        Err(e) => return Exit::BadInput(format!("--corners: {e}")),
    };
    let image = match imgcodecs::imread(&args.image, imgcodecs::IMREAD_COLOR) {
        Ok(m) if !m.empty() => m,
        _ => return Exit::BadInput(format!("{}: not a readable image", args.image.display())),
    };
    let mut model = match Model::load(&args.model, 2) {
        Ok(m) => m,
        Err(e) => return Exit::Failed(e.to_string()),
    };
    let mut learnt = String::new();
    if let Some(reference) = &args.reference {
        match learn_set(&mut model, reference, args.reference_fen.as_deref()) {
            Ok(summary) => learnt = summary,
            Err(e) => return e,
        }
    }
    let seen = match (corners, args.white) {
        (None, Some(white)) => match board::corners::find(&image) {
            Ok(Some(order)) => photo::recognise_with(&mut model, &image, white.corners_from_image_order(order), true),
            Ok(None) => Err(PhotoError::NoBoard),
            Err(e) => Err(e.into()),
        },
        _ => photo::recognise(&mut model, &image, corners, None),
    };
    let seen = match seen {
        Ok(r) => r,
        Err(e) => return Exit::Failed(format!("{}: {e}", args.image.display())),
    };
    let mut text = format!("{}\n", seen.board);
    if args.verbose {
        let c = &seen.corners;
        text += &format!("corners a8,h8,h1,a1: {:.0},{:.0},{:.0},{:.0},{:.0},{:.0},{:.0},{:.0}\n", c[0].x, c[0].y, c[1].x, c[1].y, c[2].x, c[2].y, c[3].x, c[3].y);
        if !learnt.is_empty() {
            text += &format!("set learnt from {}: {learnt}\n", args.reference.as_deref().map(|p| p.display().to_string()).unwrap_or_default());
        }
        match seen.orientation {
            Orientation::Chosen { sure, tried } => {
                text += &format!("board and orientation: chosen among {tried} grids and turns, {:.1}% sure\n", 100.0 * sure)
            }
            Orientation::Checked { turns, sure } => {
                text += &format!("corner order: {}, {:.1}% sure\n", if turns == 0 { "as given".to_string() } else { format!("turned {turns} quarter turn(s)") }, 100.0 * sure)
            }
            Orientation::Given => {}
        }
        for sq in shakmaty::Square::ALL {
            let (piece, p) = seen.reading.square(sq).best();
            if p < 0.9 {
                text += &format!("{sq}: {} at {p:.2}\n", piece.map_or('.', |p| p.char()));
            }
        }
    }
    match out.write_all(text.as_bytes()) {
        Ok(()) => Exit::Ok,
        Err(e) => Exit::Failed(e.to_string()),
    }
}

/// Learns the set from the photo `reference`, which shows `fen` (default: the start position),
/// and sets it on the model; returns the correction's summary.
fn learn_set(model: &mut Model, reference: &Path, fen: Option<&str>) -> Result<String, Exit> {
    let bad = |e: String| Exit::BadInput(format!("{}: {e}", reference.display()));
    let board = super::start_position(fen).map_err(|e| Exit::BadInput(format!("--reference-fen: {e}")))?.board().clone();
    let image = match imgcodecs::imread(reference, imgcodecs::IMREAD_COLOR) {
        Ok(m) if !m.empty() => m,
        _ => return Err(bad("not a readable image".into())),
    };
    let located = locate::locate(model, &image, Some(&board)).map_err(|e| Exit::Failed(format!("{}: {e}", reference.display())))?;
    let set = reference::learn(model, &image, located.corners, &board, reference.display().to_string()).map_err(|e| match e {
        PhotoError::HandsOver(_) | PhotoError::NotThePosition(_) => bad(e.to_string()),
        e => Exit::Failed(format!("{}: {e}", reference.display())),
    })?;
    let summary = set.summary();
    model.set_correction(Some(set)).map_err(|e| Exit::Failed(e.to_string()))?;
    Ok(summary)
}
