//! The subcommands behind the `touchmove` binary: each parses its own arguments (clap) and
//! returns an [`Exit`] status that means something to a script.

pub mod analyse;
pub mod bench;
pub mod calibrate;
pub mod eval;
pub mod eval_photos;
pub mod live;
pub mod monitor;
pub mod queue;
pub mod recognise;
pub mod round;
pub mod rules;
pub mod tags;
pub mod worker;

use std::process::ExitCode;

/// How a command ended.
#[derive(Debug)]
pub enum Exit {
    /// Everything was processed.
    Ok,
    /// The input is wrong (a malformed line, an unknown square, time going backwards, a bad
    /// FEN): the message names the file, line and field. Exit code 2.
    BadInput(String),
    /// Something else failed (a file could not be written, an eval threshold not met). Exit
    /// code 1.
    Failed(String),
}

impl Exit {
    /// Prints the message, if any, and turns the status into a process exit code.
    pub fn report(self) -> ExitCode {
        match self {
            Exit::Ok => ExitCode::SUCCESS,
            Exit::BadInput(message) => {
                eprintln!("error: {message}");
                ExitCode::from(2)
            }
            Exit::Failed(message) => {
                eprintln!("error: {message}");
                ExitCode::from(1)
            }
        }
    }
}

/// The position `--fen` names (the initial position without it), or the message naming the
/// flag and the problem.
fn start_position(fen: Option<&str>) -> Result<shakmaty::Chess, String> {
    use shakmaty::fen::Fen;
    let Some(text) = fen else { return Ok(shakmaty::Chess::default()) };
    text.parse::<Fen>()
        .map_err(|e| e.to_string())
        .and_then(|f| f.into_position(shakmaty::CastlingMode::Standard).map_err(|e| e.to_string()))
        .map_err(|e| format!("--fen {text:?}: {e}"))
}

/// `--min-conf` must be a probability.
fn check_min_conf(min_conf: f32) -> Result<(), String> {
    if (0.0..=1.0).contains(&min_conf) { Ok(()) } else { Err(format!("--min-conf {min_conf}: must be between 0 and 1")) }
}
