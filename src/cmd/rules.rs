//! `touchmove rules`: physical events in (JSON Lines), moves and rulings out (JSON Lines),
//! optionally the game as PGN.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::path::PathBuf;

use super::Exit;
use crate::events::{ReadError, Reader};
use crate::pgn::Game;
use crate::rules::{Engine, Options, Record, TimeControl};

/// Arguments of `touchmove rules`.
#[derive(Debug, clap::Args)]
#[command(
    about = "Rebuild a game from physical events and rule on every Article 4 breach",
    long_about = "Reads physical events at the board (JSON Lines: touch, lift, release, press, ... with the \
hand that did each; see docs/events.md) and prints, one JSON object per line, every completed move \
and every ruling: the article of the FIDE Laws (2023) that was broken, the side, the time, the \
evidence, and the moves the Laws require instead.\n\n\
Lines are flushed as they are found, so the command can sit at the end of a live pipe. On a \
malformed line it stops with exit code 2, naming the file, line and field; what was printed stays \
printed and the PGN (with --pgn) holds the game so far.\n\n\
Exit codes: 0 processed (whatever the rulings), 1 an output could not be written, 2 bad input.",
    after_help = "Example:\n  touchmove rules --clock --declarations --fen \"rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2\" fixtures/rules/s01.jsonl"
)]
pub struct Args {
    /// The events, JSON Lines; `-` reads standard input.
    #[arg(value_name = "EVENTS.jsonl")]
    pub events: PathBuf,
    /// The position the events start from (default: the initial position).
    #[arg(long, value_name = "FEN")]
    pub fen: Option<String>,
    /// Clock presses are observed: a press completes a move (6.2), and a press without a move,
    /// a two-handed move or an unfinished promotion becomes an illegal move (7.5). Without it,
    /// a move is complete when the opponent first touches a piece or the input ends.
    #[arg(long)]
    pub clock: bool,
    /// Every "j'adoube" is in the input (an arbiter's key, a microphone), so a touch without one
    /// binds. Without it, a ruling that would vanish had "j'adoube" been said is a judgement.
    #[arg(long)]
    pub declarations: bool,
    /// The time control, for the penalty of an illegal move (7.5.5, A.3, A.5.2).
    #[arg(long, value_enum, default_value_t = TimeControl::Standard)]
    pub time_control: TimeControl,
    /// Touches with a tracker confidence below this only support a judgement, not a violation.
    #[arg(long, default_value_t = 0.7, value_name = "0..1")]
    pub min_conf: f32,
    /// Also write the game as PGN, rulings as comments with their times; rewritten atomically
    /// after every move, so a broadcast can poll it while events stream in.
    #[arg(long, value_name = "FILE")]
    pub pgn: Option<PathBuf>,
    /// The PGN's tags.
    #[command(flatten)]
    pub tags: super::tags::PgnArgs,
}

/// Runs the command, printing JSON Lines to `out`.
pub fn run(args: &Args, out: &mut impl Write) -> Exit {
    let start = match super::start_position(args.fen.as_deref()) {
        Ok(pos) => pos,
        Err(e) => return Exit::BadInput(e),
    };
    if let Err(e) = super::check_min_conf(args.min_conf) {
        return Exit::BadInput(e);
    }
    let name = args.events.display().to_string();
    let input: Box<dyn BufRead> = if name == "-" {
        Box::new(BufReader::new(io::stdin()))
    } else {
        match File::open(&args.events) {
            Ok(f) => Box::new(BufReader::new(f)),
            Err(e) => return Exit::BadInput(format!("{name}: cannot open: {e}")),
        }
    };
    let opts = Options {
        clock: args.clock,
        declarations: args.declarations,
        time_control: args.time_control,
        min_conf: args.min_conf,
    };
    let mut engine = Engine::new(start.clone(), opts);
    let mut game = Game::new(&start, args.tags.tags(false));
    let mut records = Vec::new();
    let mut counts = Counts::default();
    let mut status = Exit::Ok;
    for item in Reader::new(input) {
        match item {
            Ok(ev) => {
                counts.events += 1;
                engine.apply(&ev, &mut records);
            }
            Err(ReadError::Parse(e)) => {
                status = Exit::BadInput(format!("{name}:{}: field `{}`: {}", e.line, e.field, e.message));
                break;
            }
            Err(e @ ReadError::Io { .. }) => {
                status = Exit::BadInput(format!("{name}: {e}"));
                break;
            }
        }
        let moves_before = counts.moves;
        if let Err(e) = emit(&mut records, &engine, &mut game, &mut counts, out) {
            return Exit::Failed(format!("cannot write the output: {e}"));
        }
        // A broadcast polls the PGN: rewrite it after every move.
        if let Some(path) = args.pgn.as_ref().filter(|_| counts.moves > moves_before)
            && let Err(e) = game.write_atomic(path)
        {
            return Exit::Failed(format!("{}: cannot write the PGN: {e}", path.display()));
        }
    }
    if matches!(status, Exit::Ok) {
        engine.finish(&mut records);
        if let Err(e) = emit(&mut records, &engine, &mut game, &mut counts, out) {
            return Exit::Failed(format!("cannot write the output: {e}"));
        }
    }
    if let Some(path) = &args.pgn
        && let Err(e) = game.write_atomic(path)
    {
        return Exit::Failed(format!("{}: cannot write the PGN: {e}", path.display()));
    }
    tracing::info!(events = counts.events, moves = counts.moves, rulings = counts.rulings, warnings = counts.warnings, "done");
    status
}

#[derive(Default)]
struct Counts {
    events: u64,
    moves: u64,
    rulings: u64,
    warnings: u64,
}

/// Prints and records what the engine said, flushing so a live reader sees it at once.
fn emit(records: &mut Vec<Record>, engine: &Engine, game: &mut Game, counts: &mut Counts, out: &mut impl Write) -> io::Result<()> {
    if records.is_empty() {
        return Ok(());
    }
    for record in records.drain(..) {
        match &record {
            Record::Move(_) => counts.moves += 1,
            Record::Ruling(_) => counts.rulings += 1,
            Record::Warning(w) => {
                counts.warnings += 1;
                tracing::warn!(t = w.t, "{}", w.text);
            }
            Record::ClaimClosed(_) | Record::Correction(_) => {}
        }
        game.record(&record, engine.position());
        serde_json::to_writer(&mut *out, &record)?;
        out.write_all(b"\n")?;
    }
    out.flush()
}
