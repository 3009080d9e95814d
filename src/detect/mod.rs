//! The board model: one ONNX Runtime session (through `ort`) that reads warped boards and turns
//! the network's outputs into [`Reading`]s. The model file fixes the warp size; see
//! `models/README.md` for its inputs and outputs.

pub mod adapt;
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

pub use adapt::SetCorrection;
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
    /// What identifies this model's weights (see [`Model::fingerprint`]).
    fingerprint: String,
    /// Channels of the `features` output; 0 for a model without one.
    channels: usize,
    /// The correction for the set in front of the camera, if one was learnt.
    set: Option<SetCorrection>,
}

/// What the piece head read on a square, before any set correction, and the features it read it
/// from.
#[derive(Clone, Debug)]
pub struct Look {
    /// The reading, uncorrected.
    pub reading: Reading,
    /// Per square (in [`Square`] order, a1 first), the head's input features.
    pub features: Vec<Vec<f32>>,
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
        if names.get(..4) != Some(&["pieces", "cover", "contact", "hands"][..]) || names.get(4..).is_some_and(|rest| rest.len() > 1 || rest.first().is_some_and(|n| *n != "features")) {
            return Err(model_error(format!("outputs {names:?}, expected pieces, cover, contact, hands (and features)")));
        }
        let channels = match session.outputs().get(4).map(|o| o.dtype().tensor_shape().map(|s| s.iter().copied().collect::<Vec<i64>>())) {
            Some(Some(shape)) => match shape.as_slice() {
                [_, 64, c] if *c > 0 => *c as usize,
                _ => return Err(model_error(format!("features shape {shape:?} is not [batch, 64, channels]"))),
            },
            _ => 0,
        };
        let fingerprint = fingerprint(&std::fs::read(path).map_err(|e| model_error(e.to_string()))?);
        // side = 8 squares + 2 half-square margins
        Ok(Model { session, layout: Layout { square: side / 9, margin: side / 18 }, fingerprint, channels, set: None })
    }

    /// What identifies the model's weights: a hash of the model file, as hex. A set correction
    /// learnt with one model is refused by another.
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// Whether the model gives the features a set correction is learnt on (`features` output).
    pub fn has_features(&self) -> bool {
        self.channels > 0
    }

    /// Corrects every later reading for the set in front of the camera (`None`: the shipped head
    /// alone). Refused when the correction was learnt with another model.
    pub fn set_correction(&mut self, set: Option<SetCorrection>) -> Result<(), adapt::AdaptError> {
        if let Some(set) = &set {
            set.check(self)?;
        }
        self.set = set;
        Ok(())
    }

    /// The warp the model expects: pixels a square and margin.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Reads one warped board (an 8-bit BGR Mat of [`Model::layout`]'s size) of frame `frame`
    /// at `t` seconds, with the set correction if one is set. The Mat's bytes go to the model
    /// without a copy.
    pub fn read(&mut self, board: &Mat, frame: u64, t: f64) -> Result<Reading, DetectError> {
        if self.set.is_none() {
            return Ok(self.run(board, frame, t, false)?.reading);
        }
        let Look { mut reading, features } = self.run(board, frame, t, true)?;
        if let Some(set) = &self.set {
            for (sq, f) in reading.squares.iter_mut().zip(&features) {
                sq.classes = set.apply(&sq.classes, f);
            }
        }
        Ok(reading)
    }

    /// Reads one warped board as [`Model::read`] does, but without the set correction, and
    /// with the features the piece head reads (the model must have them: [`Model::has_features`]).
    pub fn look(&mut self, board: &Mat) -> Result<Look, DetectError> {
        self.run(board, 0, 0.0, true)
    }

    fn run(&mut self, board: &Mat, frame: u64, t: f64, with_features: bool) -> Result<Look, DetectError> {
        if with_features && self.channels == 0 {
            return Err(DetectError::Run("this model has no features output (add it with `python -m board_model.features`)".into()));
        }
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
        let features = if with_features {
            let all = extract("features")?;
            if all.len() != 64 * self.channels {
                return Err(DetectError::Run("the model's features have an unexpected size".into()));
            }
            Square::ALL.iter().map(|&sq| all[fen_index(sq) * self.channels..][..self.channels].to_vec()).collect()
        } else {
            Vec::new()
        };
        let black = hands.split_off(cells);
        let per_square = cells_side / 9;
        let reading = Reading {
            frame,
            t,
            squares,
            hands: HandMap { side: cells_side, cells_per_square: per_square, margin: per_square / 2, white: hands, black },
        };
        Ok(Look { reading, features })
    }
}

/// FNV-1a, 64 bits, of `bytes`, as 16 hex digits: stable across builds and platforms.
fn fingerprint(bytes: &[u8]) -> String {
    let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    format!("{hash:016x}")
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
