//! The monitor's pipeline: threads joined by bounded `crossbeam-channel` queues.
//!
//! ```text
//! capture ──frames──▶ prepare ──warps──▶ detect ──readings──▶ decide ──outcomes──▶ sinks (the caller's thread)
//! (OpenCV)            (gate, warp,       (ort)                (decoder, tracker,   (events.jsonl, rulings.jsonl,
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
mod reconcile;
mod sinks;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Instant, SystemTime};

use crossbeam_channel::bounded;
use opencv::core::Mat;
use shakmaty::{Bitboard, Board, Chess, Move, Position};

use crate::board::Calibration;
use crate::capture::{self, Capture, Policy, Source};
use crate::detect::Reading;
use crate::events::Event;
use crate::read::{self, Decoded, Decoder};
use crate::rules::{self, Engine, Record};
use crate::serve::OnAir;
use crate::track::{self, Tracker};
use reconcile::Reconciler;

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
    /// The set in front of the camera, as learnt by `calibrate` (`None`: the shipped model
    /// alone).
    pub set: Option<crate::detect::SetCorrection>,
    /// The position at the start, as asked for; checked against the first quiet frames, the
    /// board followed where it plainly differs (see [`read::start`]).
    pub start: Chess,
    /// `--fen auto`: the start is read from the board, the standard start unless the board
    /// plainly shows another; said either way.
    pub start_auto: bool,
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
    /// With `--serve`: where the game, the moves, rulings and warnings and the counters are
    /// published as they are decided.
    pub on_air: Option<Arc<OnAir>>,
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
            set: None,
            start,
            start_auto: false,
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
            on_air: None,
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
    /// Seconds the game decoder took, over all readings.
    pub decoder_seconds: f64,
    /// Whether the footage showed touches well enough to report them, and why not.
    pub touches: Option<track::Sight>,
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
    /// The set correction was made for another model.
    #[error(transparent)]
    Set(#[from] crate::detect::adapt::AdaptError),
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
    /// The board moved and a set is in use: the reads to learn it again from.
    relook: Option<Vec<crate::detect::Look>>,
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
    /// The hands' visits to pieces measured at this frame (`visits.jsonl`).
    visits: Vec<track::Visit>,
    records: Vec<Record>,
    /// The position after the records (for SAN and the PGN).
    position: Chess,
    /// The legal move the pieces show, not yet completed (shown last in the PGN).
    standing: Vec<Move>,
    latency: Option<f64>,
    /// The start position read from the board, on the first outcome, where it is not the one
    /// asked for.
    start: Option<Chess>,
    /// Seconds the decoder took on this frame's reading.
    decoding: f64,
    /// What the footage lets the tracker see of a touch, as of this frame.
    sight: track::Sight,
    /// When the decide stage was done with the frame: its records were decided.
    decided_at: SystemTime,
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

    let mut model = crate::detect::Model::load(&config.model, config.threads)?;
    model.set_correction(config.set.clone())?;
    let fingerprint = model.fingerprint().to_owned();
    // Sets learnt again after the board moved, from the decide stage to the model's.
    let (to_model, sets) = bounded::<crate::detect::SetCorrection>(2);
    // The model's stage tells the prepare stage when a reading showed no hand (for the drift
    // check), and of which frame.
    let quiet = Arc::new(prepare::Quiet::default());
    // Live, the decide stage tells the prepare stage while a move waits for readings to go out
    // (offline the frames read do not hang on the threads' timing).
    let undecided = config.live.then(|| Arc::new(AtomicBool::new(false)));
    let preparer = prepare::Preparer::new(config, model.layout(), quiet.clone(), undecided.clone());
    let (to_detect, prepared) = bounded::<prepare::Prepared>(if config.live { 2 } else { OFFLINE_AHEAD });
    let frames = running.frames;
    let prepare_thread = std::thread::Builder::new()
        .name("prepare".into())
        .spawn(move || preparer.run(frames, to_detect))
        .map_err(|_| PipelineError::Thread("prepare"))?;
    let detect_thread = std::thread::Builder::new()
        .name("detect".into())
        .spawn(move || detect::run(model, quiet, prepared, sets, to_decide))
        .map_err(|_| PipelineError::Thread("detect"))?;

    let game = Game {
        start: config.start.clone(),
        auto: config.start_auto,
        live: config.live,
        rules: config.rules,
        declarations: config.declarations.clone(),
        undecided,
        relearn: Relearn { fingerprint, source: config.calibration.source.clone(), to_model, learning: None },
    };
    let decide_thread = std::thread::Builder::new()
        .name("decide".into())
        .spawn(move || decide(game, readings, to_sinks))
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
        summary.decoder_seconds += outcome.decoding;
        summary.touches = Some(outcome.sight);
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
        let dropped = running.dropped.load(Ordering::Relaxed);
        if let Some(air) = &config.on_air {
            air.metrics.observe(&summary, dropped, running.reconnects.load(Ordering::Relaxed), outcome.latency);
        }
        progress(&sinks.progress(&summary, dropped));
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

/// What the decide stage starts from.
struct Game {
    start: Chess,
    auto: bool,
    live: bool,
    rules: rules::Options,
    declarations: Vec<Event>,
    /// Live: set while a move of the decoder's waits to go out (see the prepare stage).
    undecided: Option<Arc<AtomicBool>>,
    relearn: Relearn,
}

/// Learning the set again after the board moved, against the position decoded by then.
struct Relearn {
    /// The model's ([`crate::detect::Model::fingerprint`]).
    fingerprint: String,
    /// The footage, to name the frame a set is learnt from.
    source: String,
    to_model: crossbeam_channel::Sender<crate::detect::SetCorrection>,
    /// The set being learnt.
    learning: Option<std::thread::JoinHandle<()>>,
}

impl Relearn {
    /// Learns the set from `looks` of frame `index`, which shows `board`, in a thread of its own
    /// (a fraction of a second the decoder does not wait for), and sends it to the model's
    /// stage; where the frame does not show `board` (a hand, a misread), the set in use is kept.
    fn start(&mut self, looks: Vec<crate::detect::Look>, board: Board, index: u64) {
        self.finish();
        let (fingerprint, to_model) = (self.fingerprint.clone(), self.to_model.clone());
        let reference = format!("{}, frame {index}", self.source);
        let learning = std::thread::Builder::new().name("set".into()).spawn(move || match crate::photo::reference::learn_from(&fingerprint, &looks, &board, reference) {
            Ok(set) => {
                tracing::info!("the set learnt again at frame {index}, where the board moved: {}", set.summary());
                // Never waits: the decide stage joins this thread, and the model's stage may be
                // waiting on the decide stage. A full queue holds sets the model has not taken yet.
                if let Err(crossbeam_channel::TrySendError::Full(_)) = to_model.try_send(set) {
                    tracing::warn!("the set learnt at frame {index} is not used: the model's stage has not taken the ones before");
                }
            }
            Err(e) => tracing::warn!("the set is not learnt again at frame {index}, where the board moved (the one in use is kept): {e}"),
        });
        match learning {
            Ok(handle) => self.learning = Some(handle),
            Err(_) => tracing::warn!("the set is not learnt again at frame {index}: no thread to learn it in"),
        }
    }

    /// Waits for the set being learnt, if any.
    fn finish(&mut self) {
        if let Some(handle) = self.learning.take()
            && handle.join().is_err()
        {
            tracing::warn!("the set's learning failed");
        }
    }
}

/// The start is read from the readings of the footage's first this many seconds, up to the first
/// with no hand in view: a still a move would otherwise read the game's later positions.
const START_S: f64 = 1.0;

/// Reads the start position from the first readings (up to the first with no hand in view):
/// the one asked for, or the board where it plainly differs. Returns the frames read meanwhile,
/// the start, and what to say about it.
fn read_start(game: &Game, readings: &crossbeam_channel::Receiver<Analysed>) -> (Vec<Analysed>, Chess, Bitboard, Option<Record>) {
    let params = read::observe::Params::default();
    let mut early = Vec::new();
    let mut seen = Vec::new();
    let mut first = None;
    for a in readings.iter() {
        let t0 = *first.get_or_insert(a.t);
        if a.t > t0 + START_S {
            early.push(a);
            break;
        }
        let quiet = a.reading.as_ref().is_some_and(|r| read::observe::Evidence::new(r, f64::INFINITY, &params).hands < 0.3);
        if let Some(r) = &a.reading {
            seen.push(r.clone());
        }
        early.push(a);
        if quiet {
            break;
        }
    }
    let Some(start) = read::start::read(&seen, &game.start, &params) else { return (early, game.start.clone(), Bitboard::EMPTY, None) };
    let t = seen.last().map_or(0.0, |r| r.t);
    let fen = || shakmaty::fen::Fen::from_position(&start.pos, shakmaty::EnPassantMode::Legal).to_string();
    let squares = start.disagree.iter().map(|sq| sq.to_string()).collect::<Vec<_>>().join(", ");
    let said = match (start.origin, game.auto) {
        (read::start::Origin::Board, true) => Some(format!("the start position read from the board: {} ({} squares differ from the standard start: {squares}; {:.1} nats likelier)", fen(), start.disagree.len(), start.margin)),
        (read::start::Origin::Board, false) => Some(format!("the board does not show the start position asked for on {squares}: the game is read from the board, {}", fen())),
        (read::start::Origin::Asked, _) if !start.disagree.is_empty() => Some(format!("the board reads otherwise than the start position on {squares} (a misread, or pieces out of place): the game is read from {}", fen())),
        (read::start::Origin::Asked, true) => {
            tracing::info!("the start position: the standard start, {:.1} nats likelier than the model's own board", start.margin);
            None
        }
        (read::start::Origin::Asked, false) => None,
    };
    let said = said.map(|text| {
        tracing::warn!("{text}");
        Record::Warning(rules::Warning { t, text })
    });
    let misread = start.misread();
    (early, start.pos, misread, said)
}

/// The decoder overrules a reading of a square's kind for the tracker only where its
/// hypotheses, weighed by their probability, agree on the kind at least this surely.
const SURE: f64 = 0.99;

/// The decoder, the tracker and the rule engine, frame by frame: the decoder reads the game,
/// the tracker the hands (from readings the decoder has corrected where the board it reads
/// plainly differs: a misread in place is not the tracker's to follow), and the reconciler
/// gives the engine the tracker's events where they make the decoded move, the move's own
/// where they do not.
fn decide(mut game: Game, readings: crossbeam_channel::Receiver<Analysed>, out: crossbeam_channel::Sender<Outcome>) {
    let (early, start, misread, said) = read_start(&game, &readings);
    let mut said = Some((said, (start != game.start).then(|| start.clone())));
    let options = if game.live { read::Options::with_lag(read::Options::LIVE_LAG_S) } else { read::Options::default() };
    let mut decoder = Decoder::new(start.clone(), options);
    decoder.distrust(misread);
    let mut tracker = Tracker::new(start.board().clone(), track::Options::default());
    let mut reconciler = Reconciler::new(Engine::new(start, game.rules), game.declarations);
    let mut recent: std::collections::VecDeque<(f64, u64)> = std::collections::VecDeque::new();
    let mut last: Option<(f64, u64)> = None;
    let cover_max = track::Options::default().cover_max;
    for a in early.into_iter().chain(readings.iter()) {
        recent.push_back((a.t, a.index));
        while recent.len() > 2000 {
            recent.pop_front();
        }
        let mut events = Vec::new();
        let mut decoded = Vec::new();
        let mut decoding = 0.0;
        if let Some(reading) = &a.reading {
            let started = Instant::now();
            decoder.push(reading, &mut decoded);
            decoding = started.elapsed().as_secs_f64();
            tracker.expect(decoder.position().turn());
            tracker.push(&read::observe::corrected(reading, decoder.shown(), decoder.sure(SURE), cover_max), &mut events);
        } else {
            decoder.saw(a.t);
        }
        if let Some(warped) = &a.warped
            && let Err(e) = tracker.look(a.t, warped)
        {
            tracing::warn!("frame {}: the squares' views could not be compared ({e}); no touch is measured there", a.index);
        }
        if let Some(looks) = a.relook {
            game.relearn.start(looks, decoder.shown().clone(), a.index);
        }
        let mut records = Vec::new();
        let (start_said, start) = said.take().unwrap_or((None, None));
        records.extend(start_said);
        if let Some(text) = &a.warning {
            records.push(Record::Warning(rules::Warning { t: a.t, text: text.clone() }));
        }
        let (moves, replaced) = split(decoded, &mut reconciler, &mut records);
        let latency = (!events.is_empty() || !moves.is_empty()).then(|| a.at.elapsed().as_secs_f64());
        let mut settled = reconciler.push(events, moves, a.t, tracker.flushed(), &mut records);
        settled.resync |= replaced;
        // The tracker starts again from the position the decoder reads now: offline a move goes
        // out once final, when the game may have gone on past it.
        if settled.resync {
            tracker = tracker.restart(decoder.position().board().clone());
            tracker.expect(decoder.position().turn());
        }
        let outcome = Outcome {
            end: false,
            index: a.index,
            t: a.t,
            warped: a.warped,
            board: decoder.shown().clone(),
            hands_over: tracker.hands().iter().filter(|h| h.over_board).count(),
            reading: a.reading,
            events: framed(settled.events, &recent),
            visits: tracker.take_visits(),
            records,
            position: reconciler.engine().position().clone(),
            standing: reconciler.standing(),
            latency,
            start,
            decoding,
            sight: tracker.sight(),
            decided_at: SystemTime::now(),
        };
        if let Some(undecided) = &game.undecided {
            undecided.store(decoder.undecided(), Ordering::Relaxed);
        }
        last = Some((a.t, a.index));
        if out.send(outcome).is_err() {
            return;
        }
    }
    // End of input: what the decoder and the tracker still hold, then the engine's last word.
    game.relearn.finish();
    let mut events = Vec::new();
    tracker.finish(&mut events);
    let mut decoded = Vec::new();
    decoder.finish(&mut decoded);
    let mut records = Vec::new();
    let (moves, _) = split(decoded, &mut reconciler, &mut records);
    let settled = reconciler.finish(events, moves, &mut records);
    let engine = reconciler.engine_mut();
    engine.finish(&mut records);
    if let Some((t, index)) = last {
        let _ = out.send(Outcome {
            end: true,
            index,
            t,
            warped: None,
            board: decoder.shown().clone(),
            hands_over: 0,
            reading: None,
            events: framed(settled.events, &recent),
            visits: Vec::new(),
            records,
            position: engine.position().clone(),
            standing: Vec::new(),
            latency: None,
            start: None,
            decoding: 0.0,
            sight: tracker.sight(),
            decided_at: SystemTime::now(),
        });
    }
}

/// The decoder's moves; its corrections go to `records` as warnings, and moves it took back
/// (live) to `reconciler`, which takes them back from the engine.
fn split(decoded: Vec<Decoded>, reconciler: &mut Reconciler, records: &mut Vec<Record>) -> (Vec<read::DecodedMove>, bool) {
    let mut moves = Vec::new();
    let mut resync = false;
    for d in decoded {
        match d {
            // It comes before the moves put out at the same reading.
            Decoded::Replaced { t, from, replaced, by } => resync |= reconciler.replace(t, from, &replaced, by, records),
            Decoded::Move(m) => moves.push(m),
            Decoded::Correction { t, text } => records.push(Record::Warning(rules::Warning { t, text })),
            Decoded::Unfinished { t, text, mv } => {
                records.push(Record::Warning(rules::Warning { t, text }));
                moves.extend(mv);
            }
        }
    }
    (moves, resync)
}

/// `events` with the frame each happened at (the nearest of the `recent` frames).
fn framed(events: Vec<Event>, recent: &std::collections::VecDeque<(f64, u64)>) -> Vec<(Event, u64)> {
    events
        .into_iter()
        .map(|ev| {
            let frame = recent.iter().min_by(|a, b| (a.0 - ev.t).abs().total_cmp(&(b.0 - ev.t).abs())).map_or(0, |r| r.1);
            (ev, frame)
        })
        .collect()
}

/// Peak resident memory of this process in MiB (Linux `VmHWM`).
pub fn peak_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}
