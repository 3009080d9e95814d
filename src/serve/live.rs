//! The endpoints of `touchmove live --serve`: the arbiter's page, the game as PGN, the moves,
//! rulings and warnings as Server-Sent Events, the evidence images, health, metrics, and the
//! arbiter's decisions (the only writes, and the only requests that need the token).

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use futures_util::Stream;
use serde_json::json;
use tokio::sync::watch;

use super::{DecideError, Decision, OnAir, Token};

/// The arbiter's page: one file, no outside resource.
const PAGE: &str = include_str!("page.html");

#[derive(Clone)]
struct Live {
    air: Arc<OnAir>,
    token: Arc<Token>,
}

/// The router of one board's run, publishing `air`; decisions need `token`.
pub fn routes(air: Arc<OnAir>, token: Token) -> Router {
    Router::new()
        .route("/", get(|| async { Html(PAGE) }))
        .route("/game.pgn", get(game))
        .route("/events", get(events))
        .route("/evidence/{name}", get(evidence))
        .route("/healthz", get(health))
        .route("/metrics", get(metrics))
        .route("/rulings/{id}/decision", post(decide))
        .with_state(Live { air, token: Arc::new(token) })
}

async fn game(State(live): State<Live>, headers: HeaderMap) -> Response {
    super::pgn_response(&headers, live.air.game().text())
}

/// One client on `/events`: the id of the last event it was sent, those fetched but not sent
/// yet, and its wake-up. Counted as a client while it lives.
struct Follower {
    air: Arc<OnAir>,
    after: usize,
    pending: std::vec::IntoIter<(usize, Arc<str>)>,
    told: watch::Receiver<usize>,
}

impl Follower {
    fn new(air: Arc<OnAir>, after: usize) -> Follower {
        air.metrics.listeners.fetch_add(1, Ordering::Relaxed);
        // Subscribed before the first read, so nothing published in between is missed.
        let told = air.subscribe();
        Follower { air, after, pending: Vec::new().into_iter(), told }
    }

    /// The next event, waiting for it to be published (the stream ends when the client goes).
    async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some((id, data)) = self.pending.next() {
                self.after = id;
                return Some(Event::default().id(id.to_string()).data(&*data));
            }
            self.pending = self.air.events_after(self.after).into_iter();
            if self.pending.len() == 0 {
                self.told.changed().await.ok()?;
            }
        }
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        self.air.metrics.listeners.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Every event from the one after `Last-Event-ID` (from the first without it, or where the id is
/// beyond this run's: the client followed an earlier run), then each as it is published, until
/// the client goes.
async fn events(State(live): State<Live>, headers: HeaderMap) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let after = headers.get("last-event-id").and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse::<usize>().ok()).unwrap_or(0);
    let after = if after > live.air.published() { 0 } else { after };
    let stream = futures_util::stream::unfold(Follower::new(live.air, after), |mut follower| async move { follower.next().await.map(|event| (Ok(event), follower)) });
    Sse::new(stream).keep_alive(KeepAlive::default())
}

/// Whether `name` can only be a file of the evidence folder: letters, digits, `.`, `-` and
/// `_`, ending `.jpg`, not starting with a dot.
fn evidence_name(name: &str) -> bool {
    (name.ends_with(".jpg") || name.ends_with(".webm")) && !name.starts_with('.') && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}

async fn evidence(State(live): State<Live>, Path(name): Path<String>) -> Response {
    if !evidence_name(&name) {
        return (StatusCode::BAD_REQUEST, "not the name of an evidence image or clip (NNN-ARTICLE-Ts.jpg, NNN-ARTICLE-Ts.webm)\n").into_response();
    }
    let kind = if name.ends_with(".webm") { "video/webm" } else { "image/jpeg" };
    match tokio::fs::read(live.air.evidence().join(&name)).await {
        Ok(bytes) => ([(header::CONTENT_TYPE, kind), (header::CACHE_CONTROL, "max-age=3600")], bytes).into_response(),
        Err(_) => (StatusCode::NOT_FOUND, format!("no evidence image {name}\n")).into_response(),
    }
}

async fn health(State(live): State<Live>) -> Response {
    let air = &live.air;
    let body = json!({
        "status": "ok",
        "source": if air.ended() { "ended" } else { "running" },
        "frames": air.metrics.frames(),
        "events": air.published(),
    });
    axum::Json(body).into_response()
}

async fn metrics(State(live): State<Live>) -> Response {
    ([(header::CONTENT_TYPE, "application/openmetrics-text; version=1.0.0; charset=utf-8")], live.air.metrics.render()).into_response()
}

/// `POST /rulings/ID/decision`: 401 without the token, 404 for a ruling not given, 400 for a
/// body that is not a decision, else the line appended to `decisions.jsonl`.
async fn decide(State(live): State<Live>, Path(id): Path<String>, headers: HeaderMap, body: Bytes) -> Response {
    let authorization = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok());
    if !live.token.admits(authorization) {
        let why = "a decision needs the arbiter's token, as `Authorization: Bearer TOKEN` (printed when `live` started)\n";
        return (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, "Bearer")], why).into_response();
    }
    let Ok(ruling) = id.parse::<u64>() else { return (StatusCode::NOT_FOUND, format!("no ruling {id}\n")).into_response() };
    let decision = match Decision::parse(&body) {
        Ok(d) => d,
        Err(why) => return (StatusCode::BAD_REQUEST, why + "\n").into_response(),
    };
    let air = live.air.clone();
    match tokio::task::spawn_blocking(move || air.decide(ruling, &decision)).await {
        Ok(Ok(line)) => axum::Json(line).into_response(),
        Ok(Err(e @ DecideError::NoRuling(_))) => (StatusCode::NOT_FOUND, format!("{e}\n")).into_response(),
        Ok(Err(e)) => (StatusCode::INTERNAL_SERVER_ERROR, format!("{e}\n")).into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, format!("{e}\n")).into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evidence_names_stay_in_the_folder() {
        assert!(evidence_name("001-4.3.1-5.1s.jpg") && evidence_name("001-4.3.1-5.1s.webm"));
        for bad in ["../game.pgn", "..%2Fx.jpg", "a/b.jpg", ".hidden.jpg", "x.png", "..jpg", "a\\b.jpg", ""] {
            assert!(!evidence_name(bad), "{bad}");
        }
    }
}
