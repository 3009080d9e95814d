//! The endpoints of `touchmove round --nats`: the round gathered from the broker
//! ([`crate::gather`]) as one PGN for a broadcast (`/round.pgn`, ETag, 304 when unchanged),
//! every record of the round as Server-Sent Events (`/events`), the arbiters' round page (`/`,
//! from `/boards.json`), one board's game (`/boards/ID.pgn`), health and metrics.

use std::convert::Infallible;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use futures_util::Stream;
use serde_json::json;
use tokio::sync::watch;

use crate::gather::Round;

/// The round page: one file, no outside resource.
const PAGE: &str = include_str!("round.html");

/// The router of a round gathered from the broker.
pub fn routes(round: Arc<Round>) -> Router {
    let epoch = super::etag(&format!("{:?}", std::time::SystemTime::now()));
    Router::new()
        .route("/", get(|| async { Html(PAGE) }))
        .route("/round.pgn", get(pgn))
        .route("/boards.json", get(boards))
        .route("/boards/{name}", get(board))
        .route("/events", get(events))
        .route("/healthz", get(health))
        .route("/metrics", get(metrics))
        .with_state(Gathered { round, epoch: Arc::from(epoch.trim_matches('"')) })
}

#[derive(Clone)]
struct Gathered {
    round: Arc<Round>,
    /// Told apart from another run of the server, whose versions count again from 0.
    epoch: Arc<str>,
}

/// The round's PGN, tagged by its version: joined at most once per change, however often it is
/// polled.
async fn pgn(State(g): State<Gathered>, headers: HeaderMap) -> Response {
    let (text, version) = {
        let mut games = g.round.games();
        (games.pgn(), games.version())
    };
    super::tagged_pgn_response(&headers, text, format!("\"{}-{version}\"", g.epoch))
}

async fn boards(State(g): State<Gathered>) -> Response {
    let overview = g.round.games().overview();
    ([(header::CACHE_CONTROL, "no-cache")], axum::Json(overview)).into_response()
}

async fn board(State(g): State<Gathered>, Path(name): Path<String>, headers: HeaderMap) -> Response {
    let Some(id) = name.strip_suffix(".pgn") else { return (StatusCode::NOT_FOUND, "a board's game is /boards/ID.pgn\n").into_response() };
    match g.round.games().board_pgn(id) {
        Some(text) => super::pgn_response(&headers, text),
        None => (StatusCode::NOT_FOUND, format!("no board {id:?} has published in round {:?}\n", g.round.name)).into_response(),
    }
}

/// One client on `/events`.
struct Follower {
    round: Arc<Round>,
    after: u64,
    pending: std::vec::IntoIter<(u64, Arc<str>)>,
    told: watch::Receiver<u64>,
}

impl Follower {
    async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some((id, data)) = self.pending.next() {
                self.after = id;
                return Some(Event::default().id(id.to_string()).data(&*data));
            }
            self.pending = self.round.events_after(self.after).into_iter();
            if self.pending.len() == 0 {
                self.told.changed().await.ok()?;
            }
        }
    }
}

/// Every record of the round from the one after `Last-Event-ID` (ids are the records' places
/// in the broker's stream, so they hold over restarts of the round server), then each as it is
/// taken.
async fn events(State(g): State<Gathered>, headers: HeaderMap) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let after = headers.get("last-event-id").and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse::<u64>().ok()).unwrap_or(0);
    let told = g.round.subscribe();
    let follower = Follower { round: g.round, after, pending: Vec::new().into_iter(), told };
    let stream = futures_util::stream::unfold(follower, |mut follower| async move { follower.next().await.map(|event| (Ok(event), follower)) });
    Sse::new(stream).keep_alive(KeepAlive::default())
}

async fn health(State(g): State<Gathered>) -> Response {
    let boards = g.round.games().len();
    let up = g.round.connected() && g.round.caught_up();
    axum::Json(json!({"status": if up { "ok" } else { "degraded" }, "broker": g.round.connected(), "caught_up": g.round.caught_up(), "boards": boards})).into_response()
}

async fn metrics(State(g): State<Gathered>) -> Response {
    ([(header::CONTENT_TYPE, "application/openmetrics-text; version=1.0.0; charset=utf-8")], g.round.metrics.render()).into_response()
}
