//! What `analyse`, `live` and `bench` share: the game and board options, turning them into a
//! pipeline [`Config`], and a run's exit status; and Ctrl-C, which `round` waits on too.

use std::fs::File;
use std::io::BufReader;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use super::Exit;
use crate::board::Calibration;
use crate::capture::Source;
use crate::detect::{DEFAULT_MODEL, SetCorrection};
use crate::events::{Action, Reader};
use crate::pipeline::{Config, PipelineError};
use crate::rules::{self, TimeControl};

/// Options about the board, the game and the model.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Board, game and model")]
pub struct GameArgs {
    /// The calibration written by `touchmove calibrate` (corners, orientation, homography).
    #[arg(long, value_name = "FILE.json")]
    pub calibration: PathBuf,
    /// The position at the start of the footage (default: the initial position), or `auto` to
    /// read it from the first frames: the standard start unless the board plainly shows another
    /// (said either way). A position the board plainly contradicts is followed where it differs,
    /// with a warning naming the squares.
    #[arg(long, value_name = "FEN|auto")]
    pub fen: Option<String>,
    /// Spoken declarations ("j'adoube") heard on another channel: a JSON Lines file of `adjust`
    /// events (the event contract), merged in by time. With it, a touch without a declaration
    /// is a violation; without it, rulings that a declaration would cancel are judgements.
    #[arg(long, value_name = "EVENTS.jsonl")]
    pub declarations: Option<PathBuf>,
    /// The time control (changes the penalties of Appendix A.4 and A.5).
    #[arg(long, value_enum, default_value_t = TimeControl::Standard)]
    pub time_control: TimeControl,
    /// Touches seen with less confidence than this give judgements, not violations.
    #[arg(long, default_value_t = 0.7, value_name = "0..1")]
    pub min_conf: f32,
    /// The board model (ONNX).
    #[arg(long, value_name = "FILE.onnx", default_value = DEFAULT_MODEL)]
    pub model: PathBuf,
    /// Read the pieces with the shipped model alone, not with the set learnt by `calibrate`
    /// (NAME.set.json beside the calibration, used when it is there).
    #[arg(long)]
    pub no_set: bool,
    /// CPU threads for the model.
    #[arg(long, default_value_t = 2)]
    pub threads: usize,
    /// Run the model on every frame, not only where something moved.
    #[arg(long)]
    pub every_frame: bool,
}

impl GameArgs {
    /// The pipeline's configuration for `source`, writing to `out`; the message names what is
    /// wrong with the arguments.
    pub fn config(&self, source: Source, out: PathBuf, live: bool, overlay: bool) -> Result<Config, String> {
        let calibration = Calibration::load(&self.calibration).map_err(|e| e.to_string())?;
        let set_path = SetCorrection::path_beside(&self.calibration);
        let set = if self.no_set || !set_path.exists() { None } else { Some(SetCorrection::load(&set_path).map_err(|e| e.to_string())?) };
        let auto = self.fen.as_deref() == Some("auto");
        let start = super::start_position(self.fen.as_deref().filter(|_| !auto))?;
        super::check_min_conf(self.min_conf)?;
        let declarations = match &self.declarations {
            None => Vec::new(),
            Some(path) => {
                let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
                let mut out = Vec::new();
                for item in Reader::new(BufReader::new(file)) {
                    let ev = item.map_err(|e| format!("{}: {e}", path.display()))?;
                    if matches!(ev.action, Action::Adjust) {
                        out.push(ev);
                    }
                }
                out
            }
        };
        Ok(Config {
            live,
            overlay,
            rules: rules::Options { clock: false, declarations: self.declarations.is_some(), time_control: self.time_control, min_conf: self.min_conf },
            declarations,
            threads: self.threads,
            gate: !self.every_frame,
            // A file or a series of photos watched live is played at its own times, as a camera
            // would deliver it.
            paced: live && !source.is_live(),
            echo: live,
            start_auto: auto,
            set,
            ..Config::offline(source, calibration, self.model.clone(), start, out)
        })
    }
}

/// Where `analyse` and `live` write.
#[derive(Debug, clap::Args)]
pub struct OutputArgs {
    /// The folder to write into (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Also write annotated.mp4: the board with the grid, hands, contacts, events and rulings.
    #[arg(long)]
    pub overlay: bool,
    /// The PGN's tags.
    #[command(flatten)]
    pub pgn: super::tags::PgnArgs,
}

/// The exit status of a run that failed: a source that cannot be read, a set file made for
/// another model, or frames the calibration does not fit, are bad input; anything else a failure.
pub fn failed(e: PipelineError) -> Exit {
    match e {
        PipelineError::Capture(_) | PipelineError::Set(_) | PipelineError::Board(crate::board::BoardError::FrameSize { .. }) => Exit::BadInput(e.to_string()),
        e => Exit::Failed(e.to_string()),
    }
}

/// A flag set by Ctrl-C (once installed; a second handler is not installed again).
pub fn interrupt_flag() -> Arc<AtomicBool> {
    static FLAG: std::sync::OnceLock<Arc<AtomicBool>> = std::sync::OnceLock::new();
    FLAG.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let set = flag.clone();
        if let Err(e) = ctrlc::set_handler(move || set.store(true, std::sync::atomic::Ordering::Relaxed)) {
            tracing::warn!("Ctrl-C will not flush the outputs: {e}");
        }
        flag
    })
    .clone()
}

/// Waits until Ctrl-C sets `interrupted`.
pub fn until_interrupted(interrupted: &AtomicBool) {
    while !interrupted.load(std::sync::atomic::Ordering::Relaxed) {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}
