//! The board model: runs the ONNX network on warped frames and turns its outputs into
//! [`Reading`]s.

pub mod reading;

pub use reading::{HandMap, Reading, SquareReading};
