//! The round's games, rebuilt from the records its boards published: each board's [`Game`]
//! takes the records as the board's own took them (so its PGN is the board's `game.pgn`), and
//! keeps its text, re-made only when that board changes. The round's PGN joins the boards'
//! texts, in the boards' order (numbers in number order), only when asked for after a change:
//! a move costs one board's text, however many boards there are.
//!
//! A record repeated (the broker's redelivery, a resend the broker no longer recognised) is
//! taken once: each board's records are numbered in its run, and a number already taken is
//! skipped. A board started again (a new run) starts its game again; records of a run it left
//! that arrive late are skipped.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use serde_json::{Value, json};
use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Color, Move};

use crate::pgn::{Date, Game, Tags};
use crate::rules::{Article, ClaimClosed, Correction, MoveRecord, Record, Ruling, Verdict};
use crate::serve::{Decision, Word};

/// A ruling as the round page shows it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Shown {
    /// Its number on its board.
    pub ruling: u64,
    /// `violation`, `illegal`, `judgement`.
    pub verdict: String,
    /// The article.
    pub article: String,
    /// The sentence.
    pub text: String,
    /// The arbiter's decision, once taken.
    pub decision: Option<String>,
}

/// One board's game as gathered.
#[derive(Debug)]
struct Board {
    run: String,
    /// The last record number taken from `run`.
    seq: u64,
    /// Runs the board left.
    left: HashSet<String>,
    game: Game,
    /// The position after the recorded moves (moves in UCI are read against it).
    position: Chess,
    /// The position the board shows, the standing move played.
    shown: Chess,
    last_move: Option<String>,
    rulings: Vec<Shown>,
    page: Option<String>,
    health: Value,
    ended: bool,
    text: Arc<str>,
}

/// Why a record is not taken.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct RecordError(String);

fn bad(why: impl Into<String>) -> RecordError {
    RecordError(why.into())
}

/// The position of FEN `text`.
fn position(text: &str) -> Result<Chess, RecordError> {
    text.parse::<Fen>().map_err(|e| bad(format!("FEN {text:?}: {e}")))?.into_position(CastlingMode::Standard).map_err(|e| bad(format!("FEN {text:?}: {e}")))
}

/// The move UCI `text` makes from `pos`.
fn uci(text: &str, pos: &Chess) -> Result<Move, RecordError> {
    text.parse::<UciMove>().map_err(|e| bad(format!("move {text:?}: {e}")))?.to_move(pos).map_err(|e| bad(format!("move {text:?}: {e}")))
}

fn field<'a>(record: &'a Value, name: &str) -> Result<&'a str, RecordError> {
    record[name].as_str().ok_or_else(|| bad(format!("no {name:?}")))
}

fn side(record: &Value) -> Result<Color, RecordError> {
    field(record, "side")?.chars().next().and_then(Color::from_char).ok_or_else(|| bad("no side"))
}

/// The tags a `start` record carries (those of a board that sent none: unknown).
fn tags(record: &Value) -> Tags {
    let t = &record["tags"];
    let text = |name: &str| t[name].as_str().unwrap_or("?").to_string();
    Tags {
        event: text("event"),
        site: text("site"),
        date: t["date"].as_str().and_then(|d| d.parse::<Date>().ok()).unwrap_or_else(Date::unknown),
        round: text("round"),
        white: text("white"),
        black: text("black"),
    }
}

impl Board {
    fn new(run: &str, start: &Chess, tags: Tags) -> Board {
        let game = Game::new(start, tags);
        let text = Arc::from(game.to_pgn());
        Board { run: run.into(), seq: 0, left: HashSet::new(), game, position: start.clone(), shown: start.clone(), last_move: None, rulings: Vec::new(), page: None, health: Value::Null, ended: false, text }
    }

    /// Takes `record` into the game; returns whether its text changed.
    fn take(&mut self, record: &Value) -> Result<bool, RecordError> {
        let t = record["t"].as_f64().unwrap_or(0.0);
        if let Some(page) = record["page"].as_str() {
            self.page = Some(page.to_string());
        }
        match field(record, "kind")? {
            "start" => {
                let start = position(field(record, "fen")?)?;
                let tags = if record["tags"].is_object() { tags(record) } else { self.game.tags().clone() };
                let (run, seq, left, page) = (std::mem::take(&mut self.run), self.seq, std::mem::take(&mut self.left), self.page.take());
                *self = Board { seq, left, page, ..Board::new(&run, &start, tags) };
                Ok(true)
            }
            "move" => {
                let after = position(field(record, "fen")?)?;
                let m = uci(field(record, "uci")?, &self.position)?;
                let san = field(record, "san")?.to_string();
                let made_t = record["made_t"].as_f64().unwrap_or(t);
                let ply = record["ply"].as_u64().unwrap_or(0) as u32;
                let record = Record::Move(MoveRecord { t, made_t, ply, side: side(record)?, m, san: san.clone(), fen: String::new() });
                self.game.record(&record, &after);
                self.position = after.clone();
                self.shown = after;
                self.last_move = Some(san);
                Ok(true)
            }
            "ruling" => {
                let verdict = Verdict::parse(field(record, "verdict")?).ok_or_else(|| bad("an unknown verdict"))?;
                let article = Article::parse(field(record, "article")?).ok_or_else(|| bad("an unknown article"))?;
                let text = field(record, "text")?.to_string();
                self.game.record(&Record::Ruling(Ruling { t, verdict, article, side: side(record)?, required: Vec::new(), text: text.clone(), evidence: Vec::new() }), &self.position);
                self.rulings.push(Shown { ruling: self.game.rulings(), verdict: verdict.as_str().into(), article: article.as_str().into(), text, decision: None });
                Ok(true)
            }
            "claim_closed" => {
                let breach_article = Article::parse(field(record, "breach_article")?).ok_or_else(|| bad("an unknown article"))?;
                let closed = ClaimClosed { t, side: side(record)?, breach_t: record["breach_t"].as_f64().unwrap_or(t), breach_article, text: field(record, "text")?.to_string() };
                self.game.record(&Record::ClaimClosed(closed), &self.position);
                Ok(true)
            }
            "correction" => {
                let ply = record["ply"].as_u64().ok_or_else(|| bad("no ply"))? as u32;
                let sans = |key: &str| record[key].as_array().map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect()).unwrap_or_default();
                let correction = Correction { t, ply, replaced: sans("replaced"), by: sans("by"), text: field(record, "text")?.to_string() };
                self.game.record(&Record::Correction(correction), &self.position);
                self.position = self.game.position().clone();
                self.shown = self.position.clone();
                Ok(true)
            }
            "standing" => {
                // All the moves standing (`moves`), or the first alone (`uci`, from a board
                // that says only that).
                let texts: Vec<&str> = match record["moves"].as_array() {
                    Some(all) => all.iter().filter_map(|v| v.as_str()).collect(),
                    None => record["uci"].as_str().into_iter().collect(),
                };
                let mut at = self.position.clone();
                let mut ms = Vec::new();
                for text in texts {
                    let m = uci(text, &at)?;
                    shakmaty::Position::play_unchecked(&mut at, m);
                    ms.push(m);
                }
                self.shown = match record["fen"].as_str() {
                    Some(fen) => position(fen)?,
                    None => self.position.clone(),
                };
                Ok(self.game.show(&ms))
            }
            "decision" => {
                let ruling = record["ruling"].as_u64().ok_or_else(|| bad("no ruling number"))?;
                let decision: Word = serde_json::from_value(record["decision"].clone()).map_err(|e| bad(format!("decision: {e}")))?;
                let note = record["note"].as_str().map(str::to_string);
                let comment = Decision { decision, note }.comment();
                if let Some(shown) = self.rulings.iter_mut().find(|r| r.ruling == ruling) {
                    shown.decision = Some(comment.clone());
                }
                Ok(self.game.annotate(ruling, &comment))
            }
            "end" => {
                self.ended = true;
                Ok(false)
            }
            "health" => {
                self.health = record.clone();
                Ok(false)
            }
            // Warnings, and kinds this version does not know, are not in the PGN.
            _ => Ok(false),
        }
    }
}

/// What became of a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Taken {
    /// Into its board's game.
    Taken,
    /// Already taken, or of a run its board left.
    Repeated,
}

/// The round's boards.
#[derive(Debug, Default)]
pub struct Games {
    boards: BTreeMap<BoardKey, Board>,
    /// Changes so far.
    version: u64,
    /// The round's PGN as last joined, and the version it was joined at.
    joined: Option<(u64, Arc<str>)>,
}

/// A board's place in the round: numbers first, in number order, then names.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct BoardKey(bool, Option<u64>, String);

impl BoardKey {
    fn of(board: &str) -> BoardKey {
        let number = board.parse().ok();
        BoardKey(number.is_none(), number, board.to_string())
    }
}

impl Games {
    /// Takes `record`, published by a board (with its `board`, `run` and `seq`).
    pub fn take(&mut self, record: &Value) -> Result<Taken, RecordError> {
        let board = field(record, "board")?;
        let run = field(record, "run")?;
        let key = BoardKey::of(board);
        let health = record["kind"] == "health";
        let seq = if health { None } else { Some(record["seq"].as_u64().ok_or_else(|| bad("no seq"))?) };
        let entry = self.boards.entry(key).or_insert_with(|| Board::new(run, &Chess::default(), Tags::unknown("?")));
        if entry.run != run {
            if entry.left.contains(run) {
                return Ok(Taken::Repeated);
            }
            if health {
                // A new run says itself with its start, not its health.
                return Ok(Taken::Repeated);
            }
            // The board started again: a new game.
            let left = entry.run.clone();
            entry.left.insert(left);
            entry.run = run.to_string();
            entry.seq = 0;
        }
        if let Some(seq) = seq {
            if seq <= entry.seq {
                return Ok(Taken::Repeated);
            }
            if seq > entry.seq + 1 {
                tracing::warn!("board {board}: records {} to {} of run {run} are missing (dropped from its outbox)", entry.seq + 1, seq - 1);
            }
            entry.seq = seq;
        }
        if entry.take(record)? {
            entry.text = Arc::from(entry.game.to_pgn());
            self.version += 1;
        }
        Ok(Taken::Taken)
    }

    /// The round's PGN: every board's game, in the boards' order.
    pub fn pgn(&mut self) -> Arc<str> {
        if let Some((version, text)) = &self.joined
            && *version == self.version
        {
            return text.clone();
        }
        let mut text = String::with_capacity(self.boards.values().map(|b| b.text.len() + 1).sum());
        for board in self.boards.values() {
            text.push_str(board.text.trim_end());
            text.push_str("\n\n");
        }
        let text: Arc<str> = Arc::from(text);
        self.joined = Some((self.version, text.clone()));
        text
    }

    /// Changes so far: the PGN differs only where this does.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// How many boards have published.
    pub fn len(&self) -> usize {
        self.boards.len()
    }

    /// Whether no board has published.
    pub fn is_empty(&self) -> bool {
        self.boards.is_empty()
    }

    /// One board's PGN, where it has published.
    pub fn board_pgn(&self, board: &str) -> Option<Arc<str>> {
        self.boards.get(&BoardKey::of(board)).map(|b| b.text.clone())
    }

    /// Every board for the round page: its players, the position it shows, its last move, its
    /// rulings not yet decided, its page, its health and whether its source ended.
    pub fn overview(&self) -> Value {
        let boards: Vec<Value> = self
            .boards
            .iter()
            .map(|(key, b)| {
                let tags = b.game.tags();
                json!({
                    "board": key.2,
                    "white": tags.white,
                    "black": tags.black,
                    "fen": Fen::from_position(&b.shown, shakmaty::EnPassantMode::Legal).to_string(),
                    "plies": b.game.plies(),
                    "last_move": b.last_move,
                    "open_rulings": b.rulings.iter().filter(|r| r.decision.is_none()).collect::<Vec<_>>(),
                    "rulings": b.rulings.len(),
                    "page": b.page,
                    "health": b.health,
                    "ended": b.ended,
                })
            })
            .collect();
        json!({"boards": boards, "version": self.version})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(board: &str, run: &str, seq: u64, mut body: Value) -> Value {
        body["board"] = json!(board);
        body["run"] = json!(run);
        body["seq"] = json!(seq);
        body
    }

    fn start() -> Value {
        json!({"kind": "start", "t": 0.0, "fen": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "tags": {"event": "Olympiad", "round": "5", "white": "Doe, Jane", "black": "Roe, Rick", "site": "?", "date": "2026.12.06"}})
    }

    fn e4() -> Value {
        json!({"kind": "move", "t": 3.2, "made_t": 3.0, "ply": 1, "side": "w", "uci": "e2e4", "san": "e4", "fen": "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"})
    }

    fn flat(text: &str) -> String {
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn records_taken_once_build_the_boards_game() {
        let mut games = Games::default();
        assert_eq!(games.take(&record("2", "r1", 1, start())).unwrap(), Taken::Taken);
        assert_eq!(games.take(&record("2", "r1", 2, e4())).unwrap(), Taken::Taken);
        let ruling = json!({"kind": "ruling", "t": 2.0, "verdict": "violation", "article": "4.3.1", "side": "w", "text": "White touched the knight on g1."});
        assert_eq!(games.take(&record("2", "r1", 3, ruling)).unwrap(), Taken::Taken);
        let version = games.version();
        // Redelivered: skipped, nothing changes.
        assert_eq!(games.take(&record("2", "r1", 2, e4())).unwrap(), Taken::Repeated);
        assert_eq!(games.version(), version);
        games.take(&record("2", "r1", 4, json!({"kind": "decision", "ruling": 1, "decision": "uphold", "note": "seen"}))).unwrap();
        let pgn = flat(&games.pgn());
        assert!(pgn.starts_with("[Event \"Olympiad\"] [Site \"?\"] [Date \"2026.12.06\"] [Round \"5\"] [White \"Doe, Jane\"]"), "{pgn}");
        assert!(pgn.ends_with("1. e4 { [%ts 3.2] } { 2.0s violation 4.3.1 (White): White touched the knight on g1. } { arbiter: upheld: seen } *"), "{pgn}");
        // Board 10 comes after board 2, a named board after the numbers.
        games.take(&record("10", "q", 1, start())).unwrap();
        games.take(&record("final", "s", 1, start())).unwrap();
        let boards: Vec<_> = games.overview()["boards"].as_array().unwrap().iter().map(|b| b["board"].as_str().unwrap().to_string()).collect();
        assert_eq!(boards, ["2", "10", "final"]);
        assert_eq!(games.pgn().matches("[Event ").count(), 3);
    }

    #[test]
    fn a_board_started_again_starts_its_game_again_and_its_old_run_is_skipped() {
        let mut games = Games::default();
        games.take(&record("1", "old", 1, start())).unwrap();
        games.take(&record("1", "old", 2, e4())).unwrap();
        games.take(&record("1", "new", 1, start())).unwrap();
        assert!(flat(&games.board_pgn("1").unwrap()).ends_with("[Annotator \"touchmove\"] *"));
        assert_eq!(games.take(&record("1", "old", 3, e4())).unwrap(), Taken::Repeated);
        let standing = json!({"kind": "standing", "t": 5.0, "side": "w", "san": "e4", "uci": "e2e4", "fen": "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"});
        games.take(&record("1", "new", 2, standing)).unwrap();
        assert!(flat(&games.board_pgn("1").unwrap()).ends_with("1. e4 { on the board, not yet completed } *"));
        assert_eq!(games.overview()["boards"][0]["fen"], "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
        // A record that is not one is refused, naming what is wrong.
        let err = games.take(&record("1", "new", 3, json!({"kind": "move", "uci": "e2e5", "san": "?", "side": "w", "fen": "8/8/8/8/8/8/8/8 w - - 0 1"}))).unwrap_err();
        assert!(err.to_string().contains("FEN") || err.to_string().contains("e2e5"), "{err}");
    }
}
