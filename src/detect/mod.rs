//! The board model: one ONNX Runtime session (through `ort`) that reads warped boards and turns
//! the network's outputs into [`Reading`]s. The model file fixes the warp size; see
//! `models/README.md` for its inputs and outputs.

pub mod reading;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use ndarray::ArrayView4;
use opencv::core::Mat;
use opencv::prelude::*;
use ort::session::Session;
use ort::session::builder::GraphOptimizationLevel;
use ort::value::TensorRef;
use shakmaty::Square;

pub use reading::{CLASSES, HandMap, Reading, SquareReading};

use crate::board::Layout;

/// The model shipped with touchmove, as built from this checkout.
pub const DEFAULT_MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/models/board.onnx");

/// What can go wrong loading or running the model.
#[derive(Debug, thiserror::Error)]
pub enum DetectError {
    /// ONNX Runtime itself could not be loaded.
    #[error(
        "cannot load ONNX Runtime ({0}); install it with `pip install onnxruntime==1.31.1` and set \
         ORT_DYLIB_PATH to its libonnxruntime.so (scripts/setup installs it in training/.venv, \
         where touchmove finds it)"
    )]
    Runtime(String),
    /// The model file could not be loaded.
    #[error("{path}: {message}")]
    Model {
        /// The model file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// Running the model failed.
    #[error("running the board model: {0}")]
    Run(String),
    /// A board image of the wrong size or type.
    #[error("the warped board is {got}; the model needs {side}x{side} 8-bit BGR")]
    Input {
        /// The model's input side in pixels.
        side: u32,
        /// What was given.
        got: String,
    },
    /// OpenCV failed.
    #[error("OpenCV: {0}")]
    OpenCv(#[from] opencv::Error),
}

/// The process's ONNX Runtime (loaded once; `ort` allows one environment a process).
fn environment() -> Result<&'static ort::environment::Environment, DetectError> {
    static ENV: OnceLock<Result<ort::environment::Environment, String>> = OnceLock::new();
    let env = ENV.get_or_init(|| {
        let path = std::env::var_os("ORT_DYLIB_PATH").map(PathBuf::from).or_else(checkout_runtime);
        let builder = match path {
            Some(path) => ort::init_from(&path).map_err(|e| format!("{}: {e}", path.display()))?,
            None => ort::init_from("libonnxruntime.so").map_err(|e| format!("ORT_DYLIB_PATH is not set and libonnxruntime.so is not on the library path: {e}"))?,
        };
        builder.with_name("touchmove").build().map_err(|e| e.to_string())
    });
    env.as_ref().map_err(|e| DetectError::Runtime(e.clone()))
}

/// The ONNX Runtime that `scripts/setup` installs for this checkout (the PyPI wheel in
/// `training/.venv`), if it is there.
fn checkout_runtime() -> Option<PathBuf> {
    let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join("training/.venv/lib");
    for python in std::fs::read_dir(lib).ok()?.flatten() {
        let capi = python.path().join("site-packages/onnxruntime/capi");
        for file in std::fs::read_dir(capi).into_iter().flatten().flatten() {
            if file.file_name().to_string_lossy().starts_with("libonnxruntime.so") {
                return Some(file.path());
            }
        }
    }
    None
}

/// The board model, ready to run.
pub struct Model {
    session: Session,
    layout: Layout,
}

impl Model {
    /// Loads the model at `path`, to run on `threads` CPU threads.
    pub fn load(path: &Path, threads: usize) -> Result<Model, DetectError> {
        let env = environment()?;
        let model_error = |message: String| DetectError::Model { path: path.to_owned(), message };
        if !path.is_file() {
            return Err(model_error("no such model file".into()));
        }
        let session = (|| -> Result<Session, String> {
            let builder = Session::builder(env).map_err(|e| e.to_string())?;
            let builder = builder.with_optimization_level(GraphOptimizationLevel::Level3).map_err(|e| e.to_string())?;
            let builder = builder.with_intra_threads(threads.max(1)).map_err(|e| e.to_string())?;
            let builder = builder.with_inter_threads(1).map_err(|e| e.to_string())?;
            // Idle workers sleep rather than spin: the model shares two cores with decoding and
            // warping, and a spinning pool takes their time.
            let mut builder = builder.with_intra_op_spinning(false).map_err(|e| e.to_string())?;
            builder.commit_from_file(path).map_err(|e| e.to_string())
        })()
        .map_err(model_error)?;
        let input = session.inputs().first().ok_or_else(|| model_error("the model has no input".into()))?;
        let shape: Vec<i64> = input.dtype().tensor_shape().map(|s| s.iter().copied().collect()).unwrap_or_default();
        let side = match shape.as_slice() {
            [_, h, w, 3] if h == w && *h > 0 && h % 9 == 0 => *h as u32,
            _ => return Err(model_error(format!("input shape {shape:?} is not [batch, side, side, 3] with side a multiple of 9"))),
        };
        let names: Vec<&str> = session.outputs().iter().map(|o| o.name()).collect();
        if names != ["pieces", "cover", "contact", "hands"] {
            return Err(model_error(format!("outputs {names:?}, expected pieces, cover, contact, hands")));
        }
        // side = 8 squares + 2 half-square margins
        Ok(Model { session, layout: Layout { square: side / 9, margin: side / 18 } })
    }

    /// The warp the model expects: pixels a square and margin.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Reads one warped board (an 8-bit BGR Mat of [`Model::layout`]'s size) of frame `frame`
    /// at `t` seconds. The Mat's bytes go to the model without a copy.
    pub fn read(&mut self, board: &Mat, frame: u64, t: f64) -> Result<Reading, DetectError> {
        let side = self.layout.side();
        if board.rows() as u32 != side || board.cols() as u32 != side || board.typ() != opencv::core::CV_8UC3 || !board.is_continuous() {
            return Err(DetectError::Input { side, got: format!("{}x{} of type {}", board.cols(), board.rows(), board.typ()) });
        }
        let view = ArrayView4::from_shape((1, side as usize, side as usize, 3), board.data_bytes()?).map_err(|e| DetectError::Run(e.to_string()))?;
        let input = TensorRef::from_array_view(view).map_err(|e| DetectError::Run(e.to_string()))?;
        let outputs = self.session.run(ort::inputs!["board" => input]).map_err(|e| DetectError::Run(e.to_string()))?;
        let extract = |name: &str| -> Result<Vec<f32>, DetectError> {
            let (_, values) = outputs[name].try_extract_tensor::<f32>().map_err(|e| DetectError::Run(format!("{name}: {e}")))?;
            Ok(values.to_vec())
        };
        let (pieces, cover, contact, mut hands) = (extract("pieces")?, extract("cover")?, extract("contact")?, extract("hands")?);
        let cells = hands.len() / 2;
        let cells_side = (cells as f64).sqrt() as usize;
        if pieces.len() != 64 * CLASSES || cover.len() != 64 || contact.len() != 64 || cells_side == 0 || cells_side * cells_side != cells || !cells_side.is_multiple_of(9) {
            return Err(DetectError::Run("the model's outputs have unexpected sizes".into()));
        }
        let squares = std::array::from_fn(|sq| {
            // outputs are in FEN reading order: a8, b8, ..., h1
            let i = fen_index(Square::new(sq as u32));
            SquareReading { classes: std::array::from_fn(|c| pieces[i * CLASSES + c]), cover: cover[i], contact: contact[i] }
        });
        let black = hands.split_off(cells);
        let per_square = cells_side / 9;
        Ok(Reading {
            frame,
            t,
            squares,
            hands: HandMap { side: cells_side, cells_per_square: per_square, margin: per_square / 2, white: hands, black },
        })
    }
}

/// The index of `sq` in FEN reading order (a8 = 0, b8 = 1, ..., h1 = 63), the order of the
/// model's outputs and of the labels.
pub fn fen_index(sq: Square) -> usize {
    (7 - usize::from(sq.rank())) * 8 + usize::from(sq.file())
}

/// The square at index `i` of FEN reading order (0 = a8, 63 = h1).
pub fn fen_square(i: usize) -> Square {
    Square::from_coords(shakmaty::File::new((i % 8) as u32), shakmaty::Rank::new(7 - (i / 8) as u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fen_order_reads_rank_eight_first() {
        for i in 0..64 {
            assert_eq!(fen_index(fen_square(i)), i);
        }
        assert_eq!(fen_index(Square::A8), 0);
        assert_eq!(fen_index(Square::H8), 7);
        assert_eq!(fen_index(Square::A7), 8);
        assert_eq!(fen_index(Square::E1), 60);
        assert_eq!(fen_index(Square::H1), 63);
    }
}
