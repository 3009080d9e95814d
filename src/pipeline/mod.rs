//! The monitor's pipeline: threads joined by bounded `crossbeam-channel` queues.
//!
//! ```text
//! capture ──frames──▶ prepare ──warps──▶ detect ──readings──▶ decide ──outcomes──▶ sinks (the caller's thread)
//! (OpenCV)            (gate, warp,       (ort)                (tracker,            (events.jsonl, rulings.jsonl,
//!                      drift)                                  rule engine)          track.jsonl, game.pgn,
//!                                                                                    evidence/, annotated.mp4)
//! ```
//!
//! Offline, capture blocks when detection lags, so nothing is dropped; live, capture drops the
//! oldest queued frame and counts it. A cheap frame difference (`gate`) skips the model on
//! frames where nothing moved. Every output is written as it happens; stopping (Ctrl-C, end of
//! input, a failure) drains the queues and flushes everything already decided.

mod detect;
mod overlay;
mod prepare;
mod sinks;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crossbeam_channel::bounded;
use opencv::core::Mat;
use shakmaty::{Board, Chess, Color, Move, Position};

use crate::board::Calibration;
use crate::capture::{self, Capture, Policy, Source};
use crate::detect::Reading;
use crate::events::Event;
use crate::rules::{self, Engine, Record};
use crate::track::{self, Tracker};

pub use sinks::Progress;

/// How to run the pipeline.
#[derive(Clone, Debug)]
pub struct Config {
    /// The video, camera or stream.
    pub source: Source,
    /// Where the board is in the image.
    pub calibration: Calibration,
    /// The board model (ONNX).
    pub model: PathBuf,
    /// The position at the start.
    pub start: Chess,
    /// Where the outputs go.
    pub out: PathBuf,
    /// Live: drop frames rather than fall behind, print rulings as they happen.
    pub live: bool,
    /// Also write `annotated.mp4`.
    pub overlay: bool,
    /// The rule engine's options.
    pub rules: rules::Options,
    /// Spoken declarations ("j'adoube") from another channel, merged into the events by time.
    pub declarations: Vec<Event>,
    /// CPU threads for the model.
    pub threads: usize,
    /// Run the model only on frames where something moved (see `gate`).
    pub gate: bool,
    /// Play a file in real time, as a camera would deliver it (latency benchmarks).
    pub paced: bool,
    /// Print moves and rulings on stdout as they are decided.
    pub echo: bool,
    /// The PGN's tags.
    pub tags: crate::pgn::Tags,
}

impl Config {
    /// An offline run of `source` into `out`, nothing dropped, the model on 2 threads behind the
    /// motion gate, the engine's default options, no declarations, no overlay, the PGN's tags
    /// unknown.
    pub fn offline(source: Source, calibration: Calibration, model: PathBuf, start: Chess, out: PathBuf) -> Config {
        Config {
            source,
            calibration,
            model,
            start,
            out,
            live: false,
            overlay: false,
            rules: rules::Options::default(),
            declarations: Vec::new(),
            threads: 2,
            gate: true,
            paced: false,
            echo: false,
            tags: crate::pgn::Tags::unknown("touchmove"),
        }
    }
}

/// What a run did.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Summary {
    /// Frames decoded.
    pub frames: u64,
    /// Frames run through the model.
    pub analysed: u64,
    /// Frames dropped because the pipeline fell behind (live only).
    pub dropped: u64,
    /// Wall-clock seconds of the run.
    pub seconds: f64,
    /// Media seconds covered (the last frame's time).
    pub video_seconds: f64,
    /// Physical events written.
    pub events: u64,
    /// Moves recorded.
    pub moves: u64,
    /// Rulings given.
    pub rulings: u64,
    /// Warnings (board moved, contradictions).
    pub warnings: u64,
    /// Per event, seconds from the capture of the frame that revealed it to its emission.
    #[serde(skip)]
    pub latencies: Vec<f64>,
    /// Peak resident memory of the process, MiB (Linux).
    pub peak_mib: Option<f64>,
}

/// What can stop a run.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// The source could not be opened or read.
    #[error(transparent)]
    Capture(#[from] crate::capture::CaptureError),
    /// The model could not be loaded or run.
    #[error(transparent)]
    Detect(#[from] crate::detect::DetectError),
    /// Warping or re-locating the board failed.
    #[error(transparent)]
    Board(#[from] crate::board::BoardError),
    /// An output could not be written.
    #[error("{path}: {message}")]
    Output {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// Drawing or encoding an output image failed.
    #[error("OpenCV: {0}")]
    OpenCv(#[from] opencv::Error),
    /// A pipeline thread panicked.
    #[error("the {0} thread failed")]
    Thread(&'static str),
}

/// A frame after the model, on its way to the tracker.
struct Analysed {
    index: u64,
    t: f64,
    at: Instant,
    /// The frame warped to the board: `None` where neither the model, the overlay nor the
    /// evidence needed it.
    warped: Option<Mat>,
    /// `None` where the gate skipped the model (nothing moved).
    reading: Option<Reading>,
    /// Said about the board or camera at this frame (moved, lost).
    warning: Option<String>,
}

/// Offline, how many frames, warped, may wait for the model. The model's work comes in bursts
/// (every frame while a hand moves, none while the board is still); a deep queue of warps,
/// a fifth the size of a 720p frame each, lets decoding run ahead through a burst on the CPU
/// the model leaves, where a short one stalls it. Live, frames do not wait: the capture
/// drops the oldest.
const OFFLINE_AHEAD: usize = 64;

/// At most this many full warps a second are kept to illustrate rulings.
const EVIDENCE_FPS: f64 = 5.0;

/// What the tracker and the engine made of one frame (or, once, of the end of the input).
struct Outcome {
    /// The end of the input: what was still pending, at the last frame; not a frame of its own
    /// (it has no `warped`).
    end: bool,
    index: u64,
    t: f64,
    warped: Option<Mat>,
    board: Board,
    /// Hands over the playing area.
    hands_over: usize,
    reading: Option<Reading>,
    /// Events with the frame they happened at.
    events: Vec<(Event, u64)>,
    records: Vec<Record>,
    /// The position after the records (for SAN and the PGN).
    position: Chess,
    /// The legal move the pieces show, not yet completed (shown last in the PGN).
    standing: Option<Move>,
    latency: Option<f64>,
}

/// Runs the pipeline until the source ends or `stop` is set; outputs go to `config.out` as
/// they happen. `progress` is told after every frame.
pub fn run(config: &Config, stop: Arc<AtomicBool>, progress: &mut dyn FnMut(&Progress)) -> Result<Summary, PipelineError> {
    let started = Instant::now();
    let mut sinks = sinks::Sinks::create(config)?;
    let mut capture = Capture::open(&config.source)?;
    if config.paced {
        capture = capture.paced();
    }
    let policy = if config.live { Policy::DropOldest } else { Policy::Block };
    let running = capture::spawn(capture, policy, if config.live { 2 } else { 6 });
    let capture_stop = running.stop.clone();
    let (to_decide, readings) = bounded::<Analysed>(8);
    let (to_sinks, outcomes) = bounded::<Outcome>(8);

    let model = crate::detect::Model::load(&config.model, config.threads)?;
    // The model's stage tells the prepare stage when a reading showed no hand (for the drift
    // check), and of which frame.
    let quiet = Arc::new(prepare::Quiet::default());
    let preparer = prepare::Preparer::new(config, model.layout(), quiet.clone());
    let (to_detect, prepared) = bounded::<prepare::Prepared>(if config.live { 2 } else { OFFLINE_AHEAD });
    let frames = running.frames;
    let prepare_thread = std::thread::Builder::new()
        .name("prepare".into())
        .spawn(move || preparer.run(frames, to_detect))
        .map_err(|_| PipelineError::Thread("prepare"))?;
    let detect_thread = std::thread::Builder::new()
        .name("detect".into())
        .spawn(move || detect::run(model, quiet, prepared, to_decide))
        .map_err(|_| PipelineError::Thread("detect"))?;

    let mut tracker = Tracker::new(config.start.board().clone(), track::Options::default());
    let mut engine = Engine::new(config.start.clone(), config.rules);
    let mut declarations = config.declarations.clone();
    declarations.sort_by(|a, b| a.t.total_cmp(&b.t));
    let decide_thread = std::thread::Builder::new()
        .name("decide".into())
        .spawn(move || decide(&mut tracker, &mut engine, declarations, readings, to_sinks))
        .map_err(|_| PipelineError::Thread("decide"))?;

    let mut summary = Summary::default();
    let mut failure = None;
    for outcome in outcomes.iter() {
        if stop.load(Ordering::Relaxed) {
            capture_stop.store(true, Ordering::Relaxed);
        }
        summary.frames += u64::from(!outcome.end);
        summary.analysed += u64::from(outcome.reading.is_some());
        summary.video_seconds = outcome.t;
        if let Some(l) = outcome.latency {
            summary.latencies.push(l);
        }
        if failure.is_none()
            && let Err(e) = sinks.write(&outcome, &mut summary)
        {
            // Stop reading, but let the threads drain so nothing decided is lost from memory.
            capture_stop.store(true, Ordering::Relaxed);
            failure = Some(e);
        }
        progress(&sinks.progress(&summary, running.dropped.load(Ordering::Relaxed)));
    }
    capture_stop.store(true, Ordering::Relaxed);
    let prepared = prepare_thread.join().map_err(|_| PipelineError::Thread("prepare"))?;
    let detected = detect_thread.join().map_err(|_| PipelineError::Thread("detect"))?;
    decide_thread.join().map_err(|_| PipelineError::Thread("decide"))?;
    let captured = running.thread.join().map_err(|_| PipelineError::Thread("capture"))?;
    summary.dropped = running.dropped.load(Ordering::Relaxed);
    summary.seconds = started.elapsed().as_secs_f64();
    summary.peak_mib = peak_mib();
    sinks.finish(&summary)?;
    if let Some(e) = failure {
        return Err(e);
    }
    detected?;
    prepared?;
    captured?;
    Ok(summary)
}

/// The side whose hands come next: the player to move, or the opponent once the tracker's
/// board shows a legal move of the player to move. That board may hold a piece the model misread
/// where it stands (a dark piece in shadow read as a White one), which the interpreter ignores
/// but which would hide the move from an exact comparison: the squares a move leaves alone need
/// only be occupied as they were.
fn expected_side(pos: &Chess, board: &Board) -> Color {
    let before = pos.board();
    let shown = |m: Move| {
        if m.from().is_none_or(|from| board.occupied().contains(from)) {
            return false;
        }
        let mut after = pos.clone();
        after.play_unchecked(m);
        let after = after.board();
        after.occupied() == board.occupied() && rules::differing(before, after).into_iter().all(|sq| after.piece_at(sq) == board.piece_at(sq))
    };
    if pos.legal_moves().into_iter().any(shown) { pos.turn().other() } else { pos.turn() }
}

/// The tracker and the rule engine, frame by frame.
fn decide(
    tracker: &mut Tracker,
    engine: &mut Engine,
    declarations: Vec<Event>,
    readings: crossbeam_channel::Receiver<Analysed>,
    out: crossbeam_channel::Sender<Outcome>,
) {
    let mut declarations = declarations.into_iter().peekable();
    let mut recent: std::collections::VecDeque<(f64, u64)> = std::collections::VecDeque::new();
    let mut last: Option<(f64, u64)> = None;
    // The move the pieces show changes only when the engine takes in events.
    let mut standing = None;
    for a in readings.iter() {
        recent.push_back((a.t, a.index));
        while recent.len() > 2000 {
            recent.pop_front();
        }
        let mut events = Vec::new();
        if let Some(reading) = &a.reading {
            tracker.expect(expected_side(engine.position(), tracker.board()));
            tracker.push(reading, &mut events);
        }
        let mut records = Vec::new();
        if let Some(text) = &a.warning {
            records.push(Record::Warning(rules::Warning { t: a.t, text: text.clone() }));
        }
        let latency = (!events.is_empty()).then(|| a.at.elapsed().as_secs_f64());
        let events = apply(engine, &mut declarations, events, &recent, &mut records);
        if !events.is_empty() {
            standing = engine.standing();
        }
        let outcome = Outcome {
            end: false,
            index: a.index,
            t: a.t,
            warped: a.warped,
            board: tracker.board().clone(),
            hands_over: tracker.hands().iter().filter(|h| h.over_board).count(),
            reading: a.reading,
            events,
            records,
            position: engine.position().clone(),
            standing,
            latency,
        };
        last = Some((a.t, a.index));
        if out.send(outcome).is_err() {
            return;
        }
    }
    // End of input: what the tracker still holds, then the engine's last word.
    let mut events = Vec::new();
    tracker.finish(&mut events);
    let mut records = Vec::new();
    let events = apply(engine, &mut declarations, events, &recent, &mut records);
    let rest: Vec<Event> = declarations.collect();
    for d in &rest {
        engine.apply(d, &mut records);
    }
    engine.finish(&mut records);
    if let Some((t, index)) = last {
        let _ = out.send(Outcome {
            end: true,
            index,
            t,
            warped: None,
            board: tracker.board().clone(),
            hands_over: 0,
            reading: None,
            events,
            records,
            position: engine.position().clone(),
            standing: None,
            latency: None,
        });
    }
}

/// Feeds the tracker's events, with any declarations due before each, to the engine; returns
/// the tracker's events with their frame numbers.
fn apply(
    engine: &mut Engine,
    declarations: &mut std::iter::Peekable<std::vec::IntoIter<Event>>,
    events: Vec<Event>,
    recent: &std::collections::VecDeque<(f64, u64)>,
    records: &mut Vec<Record>,
) -> Vec<(Event, u64)> {
    let mut out = Vec::with_capacity(events.len());
    for ev in events {
        while let Some(d) = declarations.next_if(|d| d.t <= ev.t) {
            engine.apply(&d, records);
        }
        // Written as the engine took it: a hand the engine gave to the other player (one
        // person playing both sides) counts for that player's move.
        let ev = engine.apply(&ev, records);
        let frame = recent.iter().min_by(|a, b| (a.0 - ev.t).abs().total_cmp(&(b.0 - ev.t).abs())).map_or(0, |r| r.1);
        out.push((ev, frame));
    }
    out
}

/// Peak resident memory of this process in MiB (Linux `VmHWM`).
pub fn peak_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

#[cfg(test)]
mod tests {
    use shakmaty::fen::Fen;
    use shakmaty::{CastlingMode, Piece, Square};

    use super::*;

    #[test]
    fn the_opponent_is_expected_once_the_move_stands_whatever_was_misread_elsewhere() {
        let pos = Chess::default();
        let mut board = pos.board().clone();
        assert_eq!(expected_side(&pos, &board), Color::White);
        board.discard_piece_at(Square::E2);
        board.set_piece_at(Square::E4, Piece::from_char('P').unwrap());
        assert_eq!(expected_side(&pos, &board), Color::Black);
        // Black's knight on b8 read as White's, where it stands: the move still stands.
        board.set_piece_at(Square::B8, Piece::from_char('N').unwrap());
        assert_eq!(expected_side(&pos, &board), Color::Black);
        // A square emptied or filled besides the move is no misread in place: no move shows.
        let mut gone = board.clone();
        gone.discard_piece_at(Square::A7);
        assert_eq!(expected_side(&pos, &gone), Color::White);
        // The moved piece itself must be right: a black pawn on e4 is no move of White's.
        board.set_piece_at(Square::E4, Piece::from_char('p').unwrap());
        assert_eq!(expected_side(&pos, &board), Color::White);
        // A capture: the captured square changes colour, and that is the move.
        let pos: Chess = "rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2".parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap();
        let mut board = pos.board().clone();
        board.discard_piece_at(Square::E4);
        board.set_piece_at(Square::D5, Piece::from_char('P').unwrap());
        assert_eq!(expected_side(&pos, &board), Color::Black);
    }
}
