//! `touchmove round`: one PGN for a round, the games of several boards one after another, each
//! polled from its own `touchmove live --serve` (`/game.pgn`) every few seconds. A board that
//! does not answer keeps its last game in the round, and `/healthz` names it.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;

/// A board's URL that `round` cannot poll.
#[derive(Debug, thiserror::Error)]
#[error("{url}: {why}")]
pub struct BoardUrlError {
    url: String,
    why: &'static str,
}

/// The game URL of a board given as `http://HOST:PORT` (its `/game.pgn` then) or as the URL
/// of a PGN itself.
pub fn game_url(url: &str) -> Result<String, BoardUrlError> {
    let error = |why| Err(BoardUrlError { url: url.to_string(), why });
    if url.starts_with("https://") {
        return error("https is not supported: the boards serve plain http on the hall's network");
    }
    let Some(rest) = url.strip_prefix("http://") else { return error("not an http:// URL") };
    if rest.is_empty() || rest.starts_with('/') {
        return error("no host");
    }
    if url.ends_with(".pgn") { Ok(url.to_string()) } else { Ok(format!("{}/game.pgn", url.trim_end_matches('/'))) }
}

/// One board as last polled.
#[derive(Debug)]
struct Board {
    url: String,
    /// Its last game and that game's tag.
    game: Option<(String, Option<String>)>,
    /// Why the last poll failed; `None` after a success.
    down: Option<String>,
    last_answer: Option<Instant>,
}

/// The round: the boards, and their games as one PGN.
#[derive(Debug)]
pub struct Round {
    boards: Vec<Mutex<Board>>,
    text: Mutex<Arc<str>>,
}

impl Round {
    /// A round of the boards at `urls` (game URLs, see [`game_url`]), none polled yet.
    pub fn new(urls: Vec<String>) -> Round {
        let boards = urls.into_iter().map(|url| Mutex::new(Board { url, game: None, down: Some("not polled yet".into()), last_answer: None })).collect();
        Round { boards, text: Mutex::new(Arc::from("")) }
    }

    /// Polls board `i` once with `agent`: a game that changed replaces the last one; a board
    /// that does not answer, or answers with an error, keeps it.
    fn poll(&self, i: usize, agent: &ureq::Agent) {
        let (url, tag) = {
            let board = self.boards[i].lock().unwrap_or_else(PoisonError::into_inner);
            (board.url.clone(), board.game.as_ref().and_then(|g| g.1.clone()))
        };
        let mut request = agent.get(&url);
        if let Some(tag) = &tag {
            request = request.header("If-None-Match", tag);
        }
        let answer = request.call().map_err(|e| e.to_string()).and_then(|mut response| match response.status().as_u16() {
            304 => Ok(None),
            200 => {
                let tag = response.headers().get("etag").and_then(|v| v.to_str().ok()).map(str::to_string);
                let text = response.body_mut().read_to_string().map_err(|e| e.to_string())?;
                Ok(Some((text, tag)))
            }
            status => Err(format!("HTTP {status}")),
        });
        let changed = {
            let mut board = self.boards[i].lock().unwrap_or_else(PoisonError::into_inner);
            match answer {
                Ok(game) => {
                    board.down = None;
                    board.last_answer = Some(Instant::now());
                    game.map(|g| board.game = Some(g)).is_some()
                }
                Err(why) => {
                    if board.down.as_deref() != Some(why.as_str()) {
                        tracing::warn!("{url}: {why}; the round keeps its last game");
                    }
                    board.down = Some(why);
                    false
                }
            }
        };
        if changed {
            self.join();
        }
    }

    /// Rebuilds the round's PGN from the boards' games, in the boards' order. The text's lock is
    /// held throughout, so that a rebuild from older games cannot land after a newer one.
    fn join(&self) {
        let mut joined = self.text.lock().unwrap_or_else(PoisonError::into_inner);
        let mut text = String::new();
        for board in &self.boards {
            let board = board.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some((game, _)) = &board.game {
                text.push_str(game.trim_end());
                text.push_str("\n\n");
            }
        }
        *joined = Arc::from(text);
    }

    /// The round's PGN: every board's last game.
    pub fn text(&self) -> Arc<str> {
        self.text.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Each board's state, and `"ok"` where every board answered its last poll.
    fn health(&self) -> serde_json::Value {
        let boards: Vec<_> = self
            .boards
            .iter()
            .map(|b| {
                let b = b.lock().unwrap_or_else(PoisonError::into_inner);
                json!({
                    "url": b.url,
                    "up": b.down.is_none(),
                    "error": b.down,
                    "has_game": b.game.is_some(),
                    "last_answer_s_ago": b.last_answer.map(|t| (t.elapsed().as_secs_f64() * 10.0).round() / 10.0),
                })
            })
            .collect();
        let up = boards.iter().all(|b| b["up"] == true);
        json!({"status": if up { "ok" } else { "degraded" }, "boards": boards})
    }
}

/// Polls every board of `round` every `every`, each from a thread of its own (so a board that
/// hangs holds up no other), until the process ends.
pub fn poll(round: &Arc<Round>, every: Duration) -> std::io::Result<()> {
    let timeout = every.max(Duration::from_millis(500));
    for i in 0..round.boards.len() {
        let round = round.clone();
        let agent: ureq::Agent = ureq::Agent::config_builder().timeout_global(Some(timeout)).http_status_as_error(false).build().into();
        std::thread::Builder::new().name(format!("poll-{i}")).spawn(move || {
            loop {
                let started = Instant::now();
                round.poll(i, &agent);
                std::thread::sleep(every.saturating_sub(started.elapsed()));
            }
        })?;
    }
    Ok(())
}

/// The round's router: `/round.pgn` (with its `ETag`, 304 when unchanged) and `/healthz` (200,
/// `"degraded"` naming the boards that did not answer).
pub fn routes(round: Arc<Round>) -> Router {
    Router::new().route("/round.pgn", get(pgn)).route("/healthz", get(health)).with_state(round)
}

async fn pgn(State(round): State<Arc<Round>>, headers: HeaderMap) -> Response {
    super::pgn_response(&headers, round.text())
}

async fn health(State(round): State<Arc<Round>>) -> Response {
    axum::Json(round.health()).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn board_urls_name_their_game() {
        assert_eq!(game_url("http://10.0.0.7:8080").unwrap(), "http://10.0.0.7:8080/game.pgn");
        assert_eq!(game_url("http://board1:8080/").unwrap(), "http://board1:8080/game.pgn");
        assert_eq!(game_url("http://board1/games/a.pgn").unwrap(), "http://board1/games/a.pgn");
        for bad in ["https://board1", "board1:8080", "http://", "ftp://x"] {
            assert!(game_url(bad).is_err(), "{bad}");
        }
    }

    /// A board that answers `status` with `body` to one request, then goes away.
    fn answer_once(status: &str, body: &str) -> String {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/game.pgn", listener.local_addr().unwrap());
        let reply = format!("HTTP/1.1 {status}\r\nETag: \"g1\"\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
        std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut request = [0u8; 4096];
            let _ = stream.read(&mut request);
            stream.write_all(reply.as_bytes()).unwrap();
        });
        url
    }

    #[test]
    fn a_board_that_goes_down_or_fails_keeps_its_last_game_and_is_named() {
        let agent: ureq::Agent = ureq::Agent::config_builder().timeout_global(Some(Duration::from_secs(5))).http_status_as_error(false).build().into();
        let game = "[Event \"Board 1\"]\n\n1. e4 e5 *\n";
        let round = Round::new(vec![answer_once("200 OK", game)]);
        round.poll(0, &agent);
        assert_eq!(round.text().trim_end(), game.trim_end());
        assert_eq!(round.health()["status"], "ok");
        // The board's server is gone: nothing listens on its port any more.
        round.poll(0, &agent);
        assert_eq!(round.text().trim_end(), game.trim_end(), "the last game is kept");
        let health = round.health();
        assert_eq!(health["status"], "degraded");
        assert_eq!(health["boards"][0]["up"], false);
        assert_eq!(health["boards"][0]["has_game"], true);
        // A board that answers with an error keeps its game too.
        let url = answer_once("500 Internal Server Error", "");
        round.boards[0].lock().unwrap().url = url;
        round.poll(0, &agent);
        assert_eq!(round.text().trim_end(), game.trim_end());
        assert_eq!(round.health()["boards"][0]["error"], "HTTP 500");
    }
}
