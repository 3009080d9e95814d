//! The game on the air over HTTP: `touchmove live --serve` ([`live`], from the state the
//! pipeline publishes into, [`OnAir`]) and `touchmove round` ([`round`], several boards' games
//! polled as one PGN; [`gathered`], the round gathered from the broker). axum serves on a tokio runtime of its own threads; the pipeline keeps its own
//! and never waits on a client.

mod decision;
pub mod gathered;
pub mod live;
mod metrics;
mod on_air;
pub mod round;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

pub use decision::{Decision, Token, TokenError, Word};
pub use metrics::Metrics;
pub use on_air::{DecideError, OnAir, unix_seconds};

/// Where `--serve` listens when given no address: this machine only.
pub const DEFAULT_ADDR: &str = "127.0.0.1:8080";

/// A server that cannot start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The address cannot be listened on (in use, not this machine's, a privileged port).
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The runtime's threads could not start.
    #[error("the server cannot start: {0}")]
    Runtime(std::io::Error),
}

/// Listens on `addr` now, before anything else starts, so that an address in use is said at
/// once.
pub fn bind(addr: SocketAddr) -> Result<std::net::TcpListener, ServeError> {
    let listener = std::net::TcpListener::bind(addr).map_err(|source| ServeError::Bind { addr, source })?;
    listener.set_nonblocking(true).map_err(|source| ServeError::Bind { addr, source })?;
    Ok(listener)
}

/// Serves `app` on `listener` from a thread of its own (a tokio runtime with two workers) until
/// the process ends. Returns the address served.
pub fn start(listener: std::net::TcpListener, app: Router) -> Result<SocketAddr, ServeError> {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).thread_name("serve").enable_all().build().map_err(ServeError::Runtime)?;
    let addr = listener.local_addr().map_err(ServeError::Runtime)?;
    let listener = {
        let _inside = runtime.enter();
        tokio::net::TcpListener::from_std(listener).map_err(|source| ServeError::Bind { addr, source })?
    };
    std::thread::Builder::new()
        .name("serve".into())
        .spawn(move || {
            if let Err(e) = runtime.block_on(async { axum::serve(listener, app).await }) {
                tracing::error!("the server on {addr} stopped: {e}");
            }
        })
        .map_err(ServeError::Runtime)?;
    Ok(addr)
}

/// The entity tag of `text`: a hash of its bytes, quoted.
fn etag(text: &str) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    format!("\"{:016x}\"", h.finish())
}

/// A PGN text as a response to a poll: 304 Not Modified where the request's `If-None-Match`
/// names its tag, else the text with its `ETag`.
fn pgn_response(request: &HeaderMap, text: Arc<str>) -> Response {
    let tag = etag(&text);
    tagged_pgn_response(request, text, tag)
}

/// A PGN text whose tag is `tag` as a response to a poll (see [`pgn_response`]).
fn tagged_pgn_response(request: &HeaderMap, text: Arc<str>, tag: String) -> Response {
    let matches = request
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|t| t.trim().trim_start_matches("W/"))
        .any(|t| t == tag || t == "*");
    let headers = [
        (header::ETAG, tag),
        (header::CACHE_CONTROL, "no-cache".to_string()),
        (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*".to_string()),
    ];
    if matches {
        return (StatusCode::NOT_MODIFIED, headers).into_response();
    }
    let mut response = (headers, text.to_string()).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/x-chess-pgn; charset=utf-8"));
    response
}
