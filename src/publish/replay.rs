//! Recorded games as the records a board publishes, for runs of many boards without cameras
//! (`examples/round_load.rs`) and the broker's tests: each game of `fixtures/games/` (their PGN)
//! played at a given pace, each move first standing on the board, then completed, with the
//! rulings the rule engine gives on the scripts of `fixtures/clips/` set into the game now and
//! then, and the arbiter's decision on each.

use std::path::Path;

use serde_json::{Value, json};
use shakmaty::fen::Fen;
use shakmaty::san::{San, SanPlus};
use shakmaty::{CastlingMode, Chess, EnPassantMode, Position};

use super::{Board, Command};
use crate::events::Reader;
use crate::gather::Games;
use crate::rules::{Engine, Options, Record};

/// A record to publish `t` seconds into the game.
pub type Timed = (f64, Value);

/// The moves of a PGN's main line (tags, comments, numbers and the result left out), in SAN.
fn sans(pgn: &str) -> Vec<String> {
    let body: String = pgn.lines().filter(|l| !l.starts_with('[')).collect::<Vec<_>>().join(" ");
    let mut out = Vec::new();
    let mut depth = 0;
    for token in body.split_whitespace() {
        if token.starts_with('{') {
            depth += 1;
        }
        if depth > 0 {
            if token.ends_with('}') {
                depth -= 1;
            }
            continue;
        }
        if ["1-0", "0-1", "1/2-1/2", "*"].contains(&token) {
            continue;
        }
        let token = token.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
        if token.is_empty() {
            continue;
        }
        out.push(token.to_string());
    }
    out
}

/// The game of `pgn` as a board's records, a ply every `pace` seconds (standing at once,
/// completed at 0.6 of it); after every `every`th ply the next of `rulings` (cycling), and the
/// arbiter's decision on it at 0.8 of the ply.
pub fn game(pgn: &str, pace: f64, rulings: &[Value], every: usize) -> Result<Vec<Timed>, String> {
    let mut pos = Chess::default();
    let mut out: Vec<Timed> = vec![(0.0, json!({"kind": "start", "t": 0.0, "fen": Fen::from_position(&pos, EnPassantMode::Legal).to_string()}))];
    let mut given = 0u64;
    for (i, text) in sans(pgn).iter().enumerate() {
        let t = (i + 1) as f64 * pace;
        let m = text.parse::<San>().map_err(|e| format!("{text}: {e}"))?.to_move(&pos).map_err(|e| format!("{text}: {e}"))?;
        let side = pos.turn().char().to_string();
        let uci = m.to_uci(CastlingMode::Standard).to_string();
        let mut after = pos.clone();
        let san = SanPlus::from_move_and_play_unchecked(&mut after, m).to_string();
        let fen = Fen::from_position(&after, EnPassantMode::Legal).to_string();
        out.push((t, json!({"kind": "standing", "t": t, "side": side, "san": san, "uci": uci, "fen": fen})));
        let done = t + 0.6 * pace;
        out.push((done, json!({"kind": "move", "t": done, "made_t": t, "ply": i + 1, "side": side, "uci": uci, "san": san, "fen": fen})));
        pos = after;
        if every > 0 && (i + 1) % every == 0 && !rulings.is_empty() {
            let mut ruling = rulings[given as usize % rulings.len()].clone();
            given += 1;
            ruling["t"] = json!(done);
            out.push((done, ruling));
            let word = if given.is_multiple_of(2) { "dismiss" } else { "uphold" };
            out.push((done + 0.2 * pace, json!({"kind": "decision", "ruling": given, "decision": word, "note": format!("seen on ply {}", i + 1)})));
        }
    }
    let end = out.last().map_or(0.0, |r| r.0) + pace;
    out.push((end, json!({"kind": "end"})));
    Ok(out)
}

/// The rulings the engine gives on the scripts of the fixture clips under `clips`, as records.
pub fn clip_rulings(clips: &Path) -> Result<Vec<Value>, String> {
    let mut out = Vec::new();
    let mut dirs: Vec<_> = std::fs::read_dir(clips).map_err(|e| format!("{}: {e}", clips.display()))?.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.join("events.jsonl").is_file()).collect();
    dirs.sort();
    for dir in dirs {
        let labels: Value = std::fs::read_to_string(dir.join("labels.json")).ok().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default();
        let pos = labels["fen"].as_str().and_then(|f| f.parse::<Fen>().ok()).and_then(|f| f.into_position(CastlingMode::Standard).ok()).unwrap_or_default();
        let mut engine = Engine::new(pos, Options { clock: true, declarations: true, ..Options::default() });
        let mut records = Vec::new();
        let path = dir.join("events.jsonl");
        let file = std::fs::File::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        for ev in Reader::new(std::io::BufReader::new(file)) {
            engine.apply(&ev.map_err(|e| format!("{}: {e}", path.display()))?, &mut records);
        }
        engine.finish(&mut records);
        out.extend(records.iter().filter(|r| matches!(r, Record::Ruling(_))).map(|r| serde_json::to_value(r).unwrap_or_default()));
    }
    Ok(out)
}

/// The games of `fixtures/games/` under `games`, each as a board's records (see [`game`]).
pub fn fixture_games(games: &Path, clips: &Path, pace: f64, every: usize) -> Result<Vec<Vec<Timed>>, String> {
    let rulings = clip_rulings(clips)?;
    let mut dirs: Vec<_> = std::fs::read_dir(games).map_err(|e| format!("{}: {e}", games.display()))?.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.join("game.pgn").is_file()).collect();
    dirs.sort();
    dirs.iter()
        .map(|dir| {
            let path = dir.join("game.pgn");
            let pgn = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            game(&pgn, pace, &rulings, every).map_err(|e| format!("{}: {e}", path.display()))
        })
        .collect()
}

/// Publishes `script` through `board`, `speed` game seconds a second, each record marked with
/// when the board was told it (`told_ns`, Unix nanoseconds, for measuring how long it takes to
/// reach the round), then sends what waits (for up to `finish` seconds more) and stops. Returns
/// the records left unsent.
pub async fn play(board: Board, script: &[Timed], speed: f64, finish: f64) -> usize {
    let (commands, receiver) = tokio::sync::mpsc::unbounded_channel();
    let running = tokio::spawn(board.run(receiver));
    let started = tokio::time::Instant::now();
    for (t, record) in script {
        tokio::time::sleep_until(started + std::time::Duration::from_secs_f64(t / speed)).await;
        let mut record = record.clone();
        record["told_ns"] = json!(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64));
        let _ = commands.send(Command::Record(record));
    }
    let _ = commands.send(Command::Finish(std::time::Instant::now() + std::time::Duration::from_secs_f64(finish)));
    running.await.unwrap_or(usize::MAX)
}

/// The round that `boards` make, each playing its script under `tags`, taken straight into the
/// round's games, with no broker between: what the round must show after a run with one.
pub fn reference(boards: &[(String, &[Timed])], tags: &crate::pgn::Tags) -> Games {
    let mut games = Games::default();
    for (board, script) in boards {
        for (seq, (_, record)) in script.iter().enumerate() {
            let mut record = record.clone();
            record["board"] = json!(board);
            record["run"] = json!("reference");
            record["seq"] = json!(seq + 1);
            if record["kind"] == "start" {
                record["tags"] = super::tags_value(tags);
            }
            if let Err(e) = games.take(&record) {
                tracing::warn!("board {board}: {e}");
            }
        }
    }
    games
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fixture_game_replays_whole_with_rulings_and_decisions() {
        let games = fixture_games(Path::new("fixtures/games"), Path::new("fixtures/clips"), 1.0, 10).unwrap();
        assert_eq!(games.len(), 3);
        let fischer = &games[1];
        let moves: Vec<_> = fischer.iter().filter(|r| r.1["kind"] == "move").map(|r| r.1["san"].as_str().unwrap().to_string()).collect();
        assert_eq!(moves.len(), 82);
        assert_eq!(moves.last().unwrap(), "Rc2#");
        assert_eq!(fischer.iter().filter(|r| r.1["kind"] == "ruling").count(), 8);
        assert!(fischer.windows(2).all(|w| w[0].0 <= w[1].0), "in time order");
        assert_eq!(fischer.last().unwrap().1["kind"], "end");
    }
}
