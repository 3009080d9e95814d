//! The game as standard PGN (export format): the seven-tag roster, SAN moves, and every ruling
//! as a comment after the move it concerns, with its time; a move standing on the board but not
//! yet completed is shown last, marked so; an arbiter's decision on a ruling as a comment after
//! the ruling's. Written atomically, so a broadcast polling the file never reads half a game;
//! [`GameFile`] shares one game, and its file, between the threads that change it.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::{Chess, Color, EnPassantMode, Move, Position};

use crate::rules::{Correction, Record};

/// The seven-tag roster's tags but the result, which the game decides.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tags {
    /// The event: a tournament, a match.
    pub event: String,
    /// Where it is played.
    pub site: String,
    /// When.
    pub date: Date,
    /// The round.
    pub round: String,
    /// White's player.
    pub white: String,
    /// Black's player.
    pub black: String,
}

impl Tags {
    /// Tags of `event`, the rest unknown.
    pub fn unknown(event: &str) -> Tags {
        let q = || "?".to_string();
        Tags { event: event.into(), site: q(), date: Date::unknown(), round: q(), white: q(), black: q() }
    }
}

/// A PGN date: `YYYY.MM.DD`, any digit `?` where not known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Date(String);

impl Date {
    /// The date not known: `????.??.??`.
    pub fn unknown() -> Date {
        Date("????.??.??".into())
    }

    /// The day `unix_seconds` falls on, in UTC.
    pub fn of_unix(unix_seconds: u64) -> Date {
        // Days to a civil date (proleptic Gregorian), after Howard Hinnant's `civil_from_days`.
        let z = (unix_seconds / 86_400) as i64 + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        let year = yoe + era * 400 + i64::from(month <= 2);
        Date(format!("{year:04}.{month:02}.{day:02}"))
    }

    /// As PGN writes it.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::str::FromStr for Date {
    type Err = String;

    fn from_str(text: &str) -> Result<Date, String> {
        let b = text.as_bytes();
        let shaped = b.len() == 10 && b.iter().enumerate().all(|(i, &c)| if i == 4 || i == 7 { c == b'.' } else { c.is_ascii_digit() || c == b'?' });
        if shaped { Ok(Date(text.into())) } else { Err("not a PGN date (YYYY.MM.DD, ? for digits not known)".into()) }
    }
}

/// A comment in the game: said by the engine, or a ruling, numbered from 1 in the order given.
#[derive(Clone, Debug)]
enum Comment {
    Said(String),
    Ruling(u64, String),
}

/// A game being recorded from the engine's output.
#[derive(Clone, Debug)]
pub struct Game {
    tags: Tags,
    start: Chess,
    moves: Vec<(String, Vec<Comment>)>,
    pending: Vec<Comment>,
    end: Chess,
    /// A legal move the board shows, not yet completed.
    standing: Vec<Move>,
    /// Rulings recorded so far.
    rulings: u64,
    /// The arbiter's word on a ruling, by its number.
    arbiter: BTreeMap<u64, String>,
}

impl Game {
    /// How many moves (plies) the PGN shows: those recorded and those standing.
    pub fn plies(&self) -> usize {
        self.moves.len() + self.standing.len()
    }

    /// The game's tags.
    pub fn tags(&self) -> &Tags {
        &self.tags
    }

    /// A game starting from `start`, under `tags`.
    pub fn new(start: &Chess, tags: Tags) -> Game {
        Game { tags, start: start.clone(), moves: Vec::new(), pending: Vec::new(), end: start.clone(), standing: Vec::new(), rulings: 0, arbiter: BTreeMap::new() }
    }

    /// Rulings recorded so far; the first is number 1.
    pub fn rulings(&self) -> u64 {
        self.rulings
    }

    /// Writes `note`, the arbiter's word on ruling number `ruling`, as a comment after the
    /// ruling's own (replacing an earlier word on it). Returns false, changing nothing, where
    /// no ruling has that number.
    pub fn annotate(&mut self, ruling: u64, note: &str) -> bool {
        if ruling == 0 || ruling > self.rulings {
            return false;
        }
        self.arbiter.insert(ruling, note.to_string());
        true
    }

    /// Takes one line of the engine's output into the game.
    pub fn record(&mut self, record: &Record, position_after: &Chess) {
        match record {
            Record::Move(m) => {
                // when the move was completed, as a PGN command comment (seconds into the source)
                let mut comments = vec![Comment::Said(format!("[%ts {:.1}]", m.t))];
                comments.append(&mut self.pending);
                self.moves.push((m.san.clone(), comments));
                self.end = position_after.clone();
                self.standing.clear();
            }
            Record::Ruling(r) => {
                self.rulings += 1;
                let side = if r.side == Color::White { "White" } else { "Black" };
                let text = format!("{:.1}s {} {} ({side}): {}", r.t, r.verdict.as_str(), r.article, r.text);
                self.pending.push(Comment::Ruling(self.rulings, text));
            }
            Record::ClaimClosed(c) => self.pending.push(Comment::Said(format!("{:.1}s 4.8: {}", c.t, c.text))),
            Record::Correction(c) => self.take_back(c),
            Record::Warning(_) => {}
        }
    }

    /// Takes back the moves from ply `c.ply` on (the moves that replace them come as moves of
    /// their own), and says so after the next move.
    fn take_back(&mut self, c: &Correction) {
        let keep = (c.ply.saturating_sub(1) as usize).min(self.moves.len());
        self.moves.truncate(keep);
        let mut end = self.start.clone();
        for (san, _) in &self.moves {
            match san.parse::<shakmaty::san::San>().ok().and_then(|s| s.to_move(&end).ok()) {
                Some(m) => end.play_unchecked(m),
                None => break,
            }
        }
        self.end = end;
        self.standing.clear();
        self.pending.push(Comment::Said(format!("{:.1}s correction: {}", c.t, c.text)));
    }

    /// The position the recorded moves reach.
    pub fn position(&self) -> &Chess {
        &self.end
    }

    /// Shows `ms`, moves standing on the board but not yet completed (the board shows them
    /// made; the opponent's touch that completes each, or its events, are still to come), after
    /// the recorded moves; as far as they are legal there, one after the other. Returns whether
    /// that changes the text.
    pub fn show(&mut self, ms: &[Move]) -> bool {
        let mut pos = self.end.clone();
        let legal: Vec<Move> = ms
            .iter()
            .copied()
            .take_while(|&m| {
                let ok = pos.is_legal(m);
                if ok {
                    pos.play_unchecked(m);
                }
                ok
            })
            .collect();
        let changed = legal != self.standing;
        self.standing = legal;
        changed
    }

    /// The result tag: decided only by checkmate or a drawn final position, else `*`.
    fn result(&self) -> &'static str {
        self.end.outcome().as_str()
    }

    /// The PGN text.
    pub fn to_pgn(&self) -> String {
        let result = self.result();
        let mut out = String::new();
        let t = &self.tags;
        let tags = [
            ("Event", t.event.as_str()),
            ("Site", &t.site),
            ("Date", t.date.as_str()),
            ("Round", &t.round),
            ("White", &t.white),
            ("Black", &t.black),
            ("Result", result),
        ];
        for (k, v) in tags {
            let _ = writeln!(out, "[{k} \"{}\"]", v.replace('\\', "\\\\").replace('"', "\\\""));
        }
        if self.start != Chess::default() {
            let _ = writeln!(out, "[SetUp \"1\"]\n[FEN \"{}\"]", Fen::from_position(&self.start, EnPassantMode::Legal));
        }
        out.push_str("[Annotator \"touchmove\"]\n\n");
        let mut tokens: Vec<String> = Vec::new();
        let mut number = self.start.fullmoves().get();
        let mut turn = self.start.turn();
        // Every move carries its time as a comment, so each is numbered, Black's as "N...".
        let numbered = |number: u32, turn: Color| if turn == Color::White { format!("{number}.") } else { format!("{number}...") };
        for (san, comments) in &self.moves {
            tokens.push(numbered(number, turn));
            tokens.push(san.clone());
            comments.iter().for_each(|c| self.comment(c, &mut tokens));
            if turn == Color::Black {
                number += 1;
            }
            turn = turn.other();
        }
        let mut pos = self.end.clone();
        for &m in &self.standing {
            tokens.push(numbered(number, turn));
            tokens.push(SanPlus::from_move_and_play_unchecked(&mut pos, m).to_string());
            comment("on the board, not yet completed", &mut tokens);
            if turn == Color::Black {
                number += 1;
            }
            turn = turn.other();
        }
        self.pending.iter().for_each(|c| self.comment(c, &mut tokens));
        tokens.push(result.to_string());
        let mut line = String::new();
        for token in tokens {
            if !line.is_empty() && line.len() + 1 + token.len() > 79 {
                out.push_str(&line);
                out.push('\n');
                line.clear();
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(&token);
        }
        out.push_str(&line);
        out.push_str("\n\n");
        out
    }

    /// A comment as tokens; a ruling followed by the arbiter's word on it, if any.
    fn comment(&self, c: &Comment, tokens: &mut Vec<String>) {
        match c {
            Comment::Said(text) => comment(text, tokens),
            Comment::Ruling(n, text) => {
                comment(text, tokens);
                if let Some(note) = self.arbiter.get(n) {
                    comment(note, tokens);
                }
            }
        }
    }

    /// Writes the PGN to `path` through a temporary file and a rename.
    pub fn write_atomic(&self, path: &Path) -> io::Result<()> {
        write_atomic(path, &self.to_pgn())
    }
}

/// Writes `text` to `path` through a temporary file and a rename.
fn write_atomic(path: &Path, text: &str) -> io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

/// One game shared between threads and kept in its PGN file: the pipeline records moves and
/// rulings, an arbiter adds decisions. Each change is made and written under one lock, so two
/// writers never interleave, and the text last written is kept apart for readers, who never wait
/// on a change or a write.
#[derive(Debug)]
pub struct GameFile {
    path: PathBuf,
    game: Mutex<Game>,
    text: Mutex<Arc<str>>,
}

impl GameFile {
    /// `game`, to be kept in `path` (not written until the first change).
    pub fn new(path: PathBuf, game: Game) -> GameFile {
        let text = Mutex::new(Arc::from(game.to_pgn()));
        GameFile { path, game: Mutex::new(game), text }
    }

    /// Makes `change`; where it returns true (the text changed), rewrites the file. Returns
    /// what `change` returned.
    pub fn update(&self, change: impl FnOnce(&mut Game) -> bool) -> io::Result<bool> {
        let mut game = self.game.lock().unwrap_or_else(PoisonError::into_inner);
        if !change(&mut game) {
            return Ok(false);
        }
        let text: Arc<str> = Arc::from(game.to_pgn());
        // Written first: what is served is what the file holds.
        write_atomic(&self.path, &text)?;
        *self.text.lock().unwrap_or_else(PoisonError::into_inner) = text;
        Ok(true)
    }

    /// What `look` reads of the game, under the lock.
    pub fn read<T>(&self, look: impl FnOnce(&Game) -> T) -> T {
        look(&self.game.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// The PGN text as last changed.
    pub fn text(&self) -> Arc<str> {
        self.text.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// A PGN comment as tokens, word by word so lines can wrap; braces cannot appear inside one.
fn comment(text: &str, tokens: &mut Vec<String>) {
    tokens.push("{".into());
    tokens.extend(text.split_whitespace().map(|w| w.replace(['{', '}'], "")));
    tokens.push("}".into());
}

#[cfg(test)]
mod tests {
    use shakmaty::{Move, Role, Square};

    use super::*;
    use crate::rules::MoveRecord;

    #[test]
    fn writes_numbers_comments_and_result() {
        let start = Chess::default();
        let mut game = Game::new(&start, Tags::unknown("test"));
        let mut pos = start.clone();
        for (from, to, role) in [(Square::F2, Square::F3, Role::Pawn), (Square::E7, Square::E5, Role::Pawn), (Square::G2, Square::G4, Role::Pawn), (Square::D8, Square::H4, Role::Queen)] {
            let m = Move::Normal { role, from, capture: None, to, promotion: None };
            let side = pos.turn();
            let san = shakmaty::san::SanPlus::from_move_and_play_unchecked(&mut pos, m).to_string();
            let record = Record::Move(MoveRecord { t: 1.0, made_t: 1.0, ply: 1, side, m, san, fen: String::new() });
            game.record(&record, &pos);
        }
        let pgn = game.to_pgn();
        assert!(pgn.contains("[Result \"0-1\"]"), "{pgn}");
        let flat = pgn.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.ends_with("1. f3 { [%ts 1.0] } 1... e5 { [%ts 1.0] } 2. g4 { [%ts 1.0] } 2... Qh4# { [%ts 1.0] } 0-1"), "{pgn}");
    }

    #[test]
    fn a_correction_takes_moves_back_and_their_replacements_follow() {
        let mut game = Game::new(&Chess::default(), Tags::unknown("x"));
        let mut pos = Chess::default();
        let play = |game: &mut Game, pos: &mut Chess, uci: &str, ply: u32, t: f64| {
            let m = uci.parse::<shakmaty::uci::UciMove>().unwrap().to_move(pos).unwrap();
            let side = pos.turn();
            let san = shakmaty::san::SanPlus::from_move_and_play_unchecked(pos, m).to_string();
            game.record(&Record::Move(MoveRecord { t, made_t: t, ply, side, m, san, fen: String::new() }), pos);
        };
        play(&mut game, &mut pos, "e2e4", 1, 1.0);
        let after_e4 = pos.clone();
        play(&mut game, &mut pos, "g8h6", 2, 2.0);
        let before = game.to_pgn();
        let correction = Correction { t: 3.0, ply: 2, replaced: vec!["Nh6".into()], by: vec!["Nf6".into()], text: "the board now reads Nf6 where Nh6 was recorded".into() };
        game.record(&Record::Correction(correction), &pos);
        assert_eq!(game.position(), &after_e4);
        let mut pos = after_e4;
        play(&mut game, &mut pos, "g8f6", 2, 3.0);
        let pgn = game.to_pgn();
        assert_ne!(pgn, before);
        let flat = pgn.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.ends_with("1. e4 { [%ts 1.0] } 1... Nf6 { [%ts 3.0] } { 3.0s correction: the board now reads Nf6 where Nh6 was recorded } *"), "{pgn}");
    }

    #[test]
    fn tags_are_written_escaped_and_dates_checked() {
        let tags = Tags { event: "Club \"A\" final".into(), white: "Carlsen, Magnus".into(), date: "2026.12.01".parse().unwrap(), ..Tags::unknown("x") };
        let pgn = Game::new(&Chess::default(), tags).to_pgn();
        assert!(pgn.starts_with("[Event \"Club \\\"A\\\" final\"]\n[Site \"?\"]\n[Date \"2026.12.01\"]\n[Round \"?\"]\n[White \"Carlsen, Magnus\"]"), "{pgn}");
        for good in ["2026.12.01", "????.??.??", "2026.??.??"] {
            assert_eq!(good.parse::<Date>().map(|d| d.as_str().to_string()), Ok(good.to_string()));
        }
        for bad in ["2026-12-01", "26.12.01", "2026.12.1x"] {
            assert!(bad.parse::<Date>().is_err(), "{bad}");
        }
        assert_eq!(Date::of_unix(0).as_str(), "1970.01.01");
        assert_eq!(Date::of_unix(951_782_400).as_str(), "2000.02.29");
        assert_eq!(Date::of_unix(1_796_083_200).as_str(), "2026.12.01");
    }

    #[test]
    fn a_standing_move_shows_last_until_it_is_recorded() {
        let start = Chess::default();
        let mut game = Game::new(&start, Tags::unknown("test"));
        let e4 = Move::Normal { role: Role::Pawn, from: Square::E2, capture: None, to: Square::E4, promotion: None };
        assert!(game.show(&[e4]));
        assert!(!game.show(&[e4]), "the same move again changes nothing");
        let flat = |g: &Game| g.to_pgn().split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat(&game).ends_with("1. e4 { on the board, not yet completed } *"), "{}", flat(&game));
        // A move that is not legal in the recorded game is not shown.
        let e5 = Move::Normal { role: Role::Pawn, from: Square::E7, capture: None, to: Square::E5, promotion: None };
        assert!(game.show(&[e5]));
        assert!(flat(&game).ends_with("[Annotator \"touchmove\"] *"), "{}", flat(&game));
        // Two standing, the second after the first; one that cannot follow is not shown.
        assert!(game.show(&[e4, e5, e5]));
        assert_eq!(game.plies(), 2);
        assert!(flat(&game).ends_with("1. e4 { on the board, not yet completed } 1... e5 { on the board, not yet completed } *"), "{}", flat(&game));
        // Recorded, it is an ordinary move.
        game.show(&[e4]);
        let mut pos = start.clone();
        let san = shakmaty::san::SanPlus::from_move_and_play_unchecked(&mut pos, e4).to_string();
        game.record(&Record::Move(MoveRecord { t: 2.0, made_t: 1.5, ply: 1, side: Color::White, m: e4, san, fen: String::new() }), &pos);
        assert!(flat(&game).ends_with("1. e4 { [%ts 2.0] } *"), "{}", flat(&game));
    }

    #[test]
    fn the_arbiters_word_follows_the_ruling_it_is_on() {
        use crate::rules::{Article, Ruling, Verdict};
        let start = Chess::default();
        let dir = tempfile::tempdir().unwrap();
        let file = GameFile::new(dir.path().join("game.pgn"), Game::new(&start, Tags::unknown("test")));
        let ruling = |t| Record::Ruling(Ruling { t, verdict: Verdict::Violation, article: Article::A4_3_1, side: Color::White, required: Vec::new(), text: "touched".into(), evidence: Vec::new() });
        assert!(!file.update(|g| g.annotate(1, "arbiter: upheld")).unwrap(), "no ruling yet");
        file.update(|g| {
            g.record(&ruling(1.0), &start);
            g.record(&ruling(2.0), &start);
            true
        })
        .unwrap();
        assert!(file.update(|g| g.annotate(2, "arbiter: dismissed, an accident")).unwrap());
        assert!(!file.update(|g| g.annotate(3, "arbiter: upheld")).unwrap());
        let flat = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        let text = flat(&file.text());
        assert!(text.ends_with("{ 1.0s violation 4.3.1 (White): touched } { 2.0s violation 4.3.1 (White): touched } { arbiter: dismissed, an accident } *"), "{text}");
        assert_eq!(flat(&std::fs::read_to_string(file.path()).unwrap()), text, "the file is the text");
        assert_eq!(file.read(Game::rulings), 2);
    }
}
