//! `touchmove recognise`: the position on a still photo, as FEN.

use std::path::PathBuf;

use opencv::imgcodecs;
use opencv::prelude::MatTraitConst;

use super::Exit;
use crate::detect::{DEFAULT_MODEL, Model};
use crate::photo::{self, Orientation};

/// Arguments of `touchmove recognise`.
#[derive(Debug, clap::Args)]
#[command(
    about = "Print the position on a photo of a board, as FEN",
    long_about = "Reads the position on a still photo of a chess board and prints the board part of its FEN.\n\n\
With --corners (the playing area's corners a8, h8, h1, a1 in pixels) the board and its orientation \
are given. Without, the board is found automatically and turned so that White's pieces lie towards \
White's edge (right for games in their opening or middlegame; give --corners for studies).\n\n\
Exit codes: 0 read, 1 no board found or the model failed, 2 an unreadable image or bad arguments.",
    after_help = "Examples:\n  touchmove recognise board.jpg\n  touchmove recognise board.jpg --corners 213,529,754,480,780,1067,120,1047 --verbose"
)]
pub struct Args {
    /// The photo (JPEG, PNG, ...).
    #[arg(value_name = "IMAGE")]
    pub image: PathBuf,
    /// The playing area's corners a8, h8, h1, a1 in pixels: x,y,x,y,x,y,x,y.
    #[arg(long, value_name = "x,y,x,y,x,y,x,y")]
    pub corners: Option<String>,
    /// The board model (ONNX).
    #[arg(long, value_name = "FILE.onnx", default_value = DEFAULT_MODEL)]
    pub model: PathBuf,
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
    let seen = match photo::recognise(&mut model, &image, corners) {
        Ok(r) => r,
        Err(e) => return Exit::Failed(format!("{}: {e}", args.image.display())),
    };
    let mut text = format!("{}\n", seen.board);
    if args.verbose {
        let c = &seen.corners;
        text += &format!("corners a8,h8,h1,a1: {:.0},{:.0},{:.0},{:.0},{:.0},{:.0},{:.0},{:.0}\n", c[0].x, c[0].y, c[1].x, c[1].y, c[2].x, c[2].y, c[3].x, c[3].y);
        if let Orientation::FromPieces { quarter_turns } = seen.orientation {
            text += &format!("orientation: read from the pieces ({quarter_turns} quarter turns from the image's top-left)\n");
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
