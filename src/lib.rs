//! touchmove: an arbiter's second pair of eyes for over-the-board chess.
//!
//! Physical events at the board (touches, lifts, releases, presses, with the hand that did
//! each) go into the [`rules`] engine, which rebuilds the game with shakmaty and rules on every
//! breach of FIDE Article 4, the act of moving the pieces. The event contract lives in
//! [`events`]; the game is written as PGN by [`pgn`].

#![warn(missing_docs)]

pub mod archive;
pub mod board;
pub mod broker;
pub mod capture;
pub mod cmd;
pub mod detect;
pub mod eval;
pub mod events;
pub mod gather;
pub mod gate;
pub mod pgn;
pub mod photo;
pub mod pipeline;
pub mod publish;
pub mod reach;
pub mod read;
pub mod rules;
pub mod serve;
pub mod track;
