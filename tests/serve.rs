//! `touchmove live --serve` and `touchmove round` as a broadcast and an arbiter use them: the real
//! binary plays a fixture clip as if live, on a free port, and every endpoint is checked while it
//! plays and after; the arbiter's page is loaded in headless Chromium (Debian's `chromium`,
//! installed by `scripts/setup`) and watched until the move and the ruling appear.
//!
//! The clip is `touch-own-4.3.1` (White touches Ng1, plays Bc4) with declarations on another
//! channel (none were made) and `--min-conf 0.3`, so the touch gives a `violation`, the verdict
//! that raises the page's banner.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use serde_json::Value;

const CLIP: &str = "fixtures/clips/touch-own-4.3.1";
const TOKEN: &str = "arbiter-test-token";

/// A free port on loopback (bound, then let go).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn agent(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder().timeout_global(Some(timeout)).http_status_as_error(false).build().into()
}

/// An answer: status, headers, body.
struct Answer {
    status: u16,
    headers: ureq::http::HeaderMap,
    body: Vec<u8>,
}

impl Answer {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

fn get(url: &str, headers: &[(&str, &str)]) -> Answer {
    let mut request = agent(Duration::from_secs(10)).get(url);
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let mut response = request.call().unwrap_or_else(|e| panic!("GET {url}: {e}"));
    let body = response.body_mut().read_to_vec().unwrap();
    Answer { status: response.status().as_u16(), headers: response.headers().clone(), body }
}

fn post(url: &str, headers: &[(&str, &str)], body: &str) -> Answer {
    let mut request = agent(Duration::from_secs(10)).post(url);
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let mut response = request.send(body).unwrap_or_else(|e| panic!("POST {url}: {e}"));
    let body = response.body_mut().read_to_vec().unwrap();
    Answer { status: response.status().as_u16(), headers: response.headers().clone(), body }
}

/// A process killed when dropped, even by a failing test.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A `touchmove live --serve` playing the clip, killed when the last test holding it is done.
struct Board {
    child: Mutex<Child>,
    url: String,
    out: tempfile::TempDir,
}

impl Drop for Board {
    fn drop(&mut self) {
        let mut child = self.child.lock().unwrap();
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// The board the tests share (started by the first that asks; the clip plays once, in real time).
fn board() -> Arc<Board> {
    static SHARED: Mutex<Weak<Board>> = Mutex::new(Weak::new());
    let mut shared = SHARED.lock().unwrap();
    if let Some(board) = shared.upgrade() {
        return board;
    }
    let board = Arc::new(start_board());
    *shared = Arc::downgrade(&board);
    board
}

fn start_board() -> Board {
    let out = tempfile::tempdir().unwrap();
    let labels: Value = serde_json::from_str(&std::fs::read_to_string(Path::new(CLIP).join("labels.json")).unwrap()).unwrap();
    let declarations = out.path().join("declarations.jsonl");
    std::fs::write(&declarations, "").unwrap();
    let token = out.path().join("token");
    std::fs::write(&token, format!("{TOKEN}\n")).unwrap();
    let port = free_port();
    let child = Command::new(env!("CARGO_BIN_EXE_touchmove"))
        .args(["live", "--source", &format!("{CLIP}/clip.mp4"), "--calibration", &format!("{CLIP}/calibration.json")])
        .args(["--fen", labels["fen"].as_str().unwrap(), "--declarations", declarations.to_str().unwrap(), "--min-conf", "0.3"])
        .args(["--out", out.path().join("run").to_str().unwrap(), "--serve", &format!("127.0.0.1:{port}"), "--token-file", token.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("touchmove runs");
    let url = format!("http://127.0.0.1:{port}");
    let board = Board { child: Mutex::new(child), url, out };
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if agent(Duration::from_secs(1)).get(&format!("{}/healthz", board.url)).call().is_ok() {
            return board;
        }
        if let Some(status) = board.child.lock().unwrap().try_wait().unwrap() {
            panic!("touchmove live --serve exited with {status} before serving");
        }
        assert!(Instant::now() < deadline, "touchmove live --serve did not answer on {} within 30 s", board.url);
        std::thread::sleep(Duration::from_millis(100));
    }
}

impl Board {
    fn run_dir(&self) -> PathBuf {
        self.out.path().join("run")
    }

    fn health(&self) -> Value {
        serde_json::from_slice(&get(&format!("{}/healthz", self.url), &[]).body).unwrap()
    }
}

/// Events of `/events` (from after `last_id`) as (id, JSON), read until `enough` says so or
/// `within` passes.
fn follow(url: &str, last_id: Option<usize>, within: Duration, enough: impl Fn(&[(usize, Value)]) -> bool) -> Vec<(usize, Value)> {
    let mut request = agent(within).get(&format!("{url}/events"));
    if let Some(id) = last_id {
        request = request.header("Last-Event-ID", id.to_string());
    }
    let response = request.call().expect("/events answers");
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(response.headers().get("content-type").and_then(|v| v.to_str().ok()), Some("text/event-stream"));
    let mut lines = BufReader::new(response.into_body().into_reader()).lines();
    let mut events = Vec::new();
    let mut id = None;
    while !enough(&events) {
        let Some(Ok(line)) = lines.next() else { break };
        if let Some(v) = line.strip_prefix("id: ").or_else(|| line.strip_prefix("id:")) {
            id = Some(v.trim().parse::<usize>().expect("numeric ids"));
        } else if let Some(data) = line.strip_prefix("data: ").or_else(|| line.strip_prefix("data:")) {
            events.push((id.expect("an id before each event's data"), serde_json::from_str(data).expect("each event is JSON")));
        }
    }
    events
}

fn ended(events: &[(usize, Value)]) -> bool {
    events.iter().any(|(_, e)| e["kind"] == "end")
}

#[test]
fn a_live_board_on_the_air_serves_the_game_the_events_and_the_arbiters_decisions() {
    let board = board();
    let url = board.url.clone();

    // A round over this board and one that is down, polled while the clip plays.
    let round_port = free_port();
    let dead = format!("http://127.0.0.1:{}", free_port());
    let round = Killed(
        Command::new(env!("CARGO_BIN_EXE_touchmove"))
            .args(["round", &url, &dead, "--serve", &format!("127.0.0.1:{round_port}"), "--every", "0.5"])
            .stderr(Stdio::null())
            .spawn()
            .expect("touchmove round runs"),
    );
    let round_url = format!("http://127.0.0.1:{round_port}");

    // Reads stay open: the page, health, the game while the clip plays.
    let page = get(&format!("{url}/"), &[]);
    assert_eq!(page.status, 200);
    assert!(page.header("content-type").unwrap().starts_with("text/html"));
    assert!(page.text().contains("new EventSource(\"events\")"), "the page follows /events");
    assert!(!page.text().contains("http://") && !page.text().contains("https://"), "the page loads nothing from outside");
    assert_eq!(board.health()["status"], "ok");

    // Clients that never read what they are sent, and one that goes at once: the others, and
    // the pipeline, go on.
    let stalled: Vec<std::net::TcpStream> = (0..3)
        .map(|_| {
            let mut s = std::net::TcpStream::connect(url.trim_start_matches("http://")).unwrap();
            s.write_all(b"GET /events HTTP/1.1\r\nHost: test\r\n\r\n").unwrap();
            s
        })
        .collect();
    drop(std::net::TcpStream::connect(url.trim_start_matches("http://")).map(|mut s| s.write_all(b"GET /events HTTP/1.1\r\nHost: test\r\n\r\n")));

    // Every event, from the start to the end of the clip.
    let events = follow(&url, None, Duration::from_secs(90), ended);
    assert!(ended(&events), "the clip ends within 90 s: {events:?}");
    let ids: Vec<usize> = events.iter().map(|e| e.0).collect();
    assert_eq!(ids, (1..=events.len()).collect::<Vec<_>>(), "ids count from 1, one per event");
    assert_eq!(events[0].1["kind"], "start");
    let moves: Vec<&Value> = events.iter().map(|e| &e.1).filter(|e| e["kind"] == "move").collect();
    assert_eq!(moves.iter().map(|m| m["san"].as_str().unwrap()).collect::<Vec<_>>(), ["Bc4"]);
    let rulings: Vec<&Value> = events.iter().map(|e| &e.1).filter(|e| e["kind"] == "ruling").collect();
    assert_eq!(rulings.len(), 1, "{rulings:?}");
    let ruling = rulings[0];
    assert_eq!((ruling["verdict"].as_str(), ruling["article"].as_str(), ruling["ruling"].as_u64()), (Some("violation"), Some("4.3.1"), Some(1)));
    // The moves the Law requires: those of the piece the tracker read as touched first (which
    // piece that is, is the contact reading's business, scored by `touchmove eval`).
    let required = ruling["required"].as_array().unwrap();
    assert!(!required.is_empty() && required.iter().all(|m| m.as_str().is_some_and(|m| (4..=5).contains(&m.len()))), "{ruling}");
    assert!(ruling["at"].as_f64().unwrap() > 1.0e9, "decided at a wall-clock time");
    // The same records as rulings.jsonl, in the same order.
    let on_disk: Vec<Value> = std::fs::read_to_string(board.run_dir().join("rulings.jsonl")).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let recorded: Vec<&Value> = events.iter().map(|e| &e.1).filter(|e| ["move", "ruling", "warning", "claim_closed"].contains(&e["kind"].as_str().unwrap())).collect();
    assert_eq!(recorded.len(), on_disk.len());
    for (sent, line) in recorded.iter().zip(&on_disk) {
        for (k, v) in line.as_object().unwrap() {
            assert_eq!(&sent[k], v, "{k} of {line}");
        }
    }

    // Resumed after event 2: event 3 onwards, the same.
    let resumed = follow(&url, Some(2), Duration::from_secs(10), ended);
    assert_eq!(resumed.first().map(|e| e.0), Some(3));
    assert_eq!(resumed, events[2..].to_vec());

    // The game: the PGN on disk, with an ETag; 304 when it has not changed.
    let game = get(&format!("{url}/game.pgn"), &[]);
    assert_eq!(game.status, 200);
    let etag = game.header("etag").expect("an ETag").to_string();
    assert!(game.text().contains("Bc4") && game.text().contains("violation 4.3.1"), "{}", game.text());
    assert_eq!(game.text(), std::fs::read_to_string(board.run_dir().join("game.pgn")).unwrap());
    let again = get(&format!("{url}/game.pgn"), &[("If-None-Match", &etag)]);
    assert_eq!((again.status, again.body.len()), (304, 0));
    assert_eq!(get(&format!("{url}/game.pgn"), &[("If-None-Match", "\"other\"")]).status, 200);

    // The evidence image, and nothing outside its folder.
    let image = ruling["image"].as_str().expect("the ruling's evidence image");
    let jpeg = get(&format!("{url}/{image}"), &[]);
    assert_eq!((jpeg.status, jpeg.header("content-type")), (200, Some("image/jpeg")));
    assert_eq!(&jpeg.body[..2], &[0xFF, 0xD8], "a JPEG");
    // The clip of the seconds around the evidence: WebM, which browsers play.
    let clip = ruling["clip"].as_str().expect("the ruling's evidence clip");
    let webm = get(&format!("{url}/{clip}"), &[]);
    assert_eq!((webm.status, webm.header("content-type")), (200, Some("video/webm")));
    assert_eq!(&webm.body[..4], &[0x1A, 0x45, 0xDF, 0xA3], "a WebM (EBML) file");
    assert_eq!(get(&format!("{url}/evidence/..%2Fgame.pgn"), &[]).status, 400);
    assert_eq!(get(&format!("{url}/evidence/none.jpg"), &[]).status, 404);

    // Metrics in Prometheus's text format.
    let metrics = get(&format!("{url}/metrics"), &[]).text();
    let value = |name: &str| metrics.lines().find_map(|l| l.strip_prefix(name).and_then(|v| v.strip_prefix(' '))).and_then(|v| v.parse::<f64>().ok()).unwrap_or_else(|| panic!("{name} in {metrics}"));
    assert_eq!(value("touchmove_moves_total"), 1.0);
    assert_eq!(value("touchmove_rulings_total"), 1.0);
    assert!(value("touchmove_frames_read_total") >= 200.0, "the clip has 210 frames");
    assert!(value("touchmove_frames_analysed_total") > 0.0);
    for name in ["touchmove_frames_dropped_total", "touchmove_camera_reconnects_total", "touchmove_latency_seconds_bucket{le=\"+Inf\"}", "touchmove_latency_seconds_count"] {
        value(name);
    }
    assert_eq!(board.health()["source"], "ended");
    assert!(value("touchmove_event_clients") >= 3.0, "the clients that never read are still connected");
    drop(stalled);

    // Decisions: the token, then a decision, then a ruling that was given.
    let decisions = board.run_dir().join("decisions.jsonl");
    let decide = format!("{url}/rulings/1/decision");
    let body = r#"{"decision": "uphold", "note": "the knight was touched"}"#;
    for refused in [post(&decide, &[], body), post(&decide, &[("Authorization", "Bearer wrong-token")], body), post(&decide, &[("Authorization", TOKEN)], body)] {
        assert_eq!(refused.status, 401, "{}", refused.text());
        assert!(refused.text().contains("token"));
    }
    assert_eq!(std::fs::read_to_string(&decisions).unwrap(), "", "made empty at the start, nothing written without the token");
    let bearer = format!("Bearer {TOKEN}");
    let auth = [("Authorization", bearer.as_str())];
    let malformed = post(&decide, &auth, r#"{"decision": "maybe"}"#);
    assert_eq!(malformed.status, 400);
    assert!(malformed.text().contains("unknown variant `maybe`"), "{}", malformed.text());
    assert_eq!(post(&decide, &auth, "uphold").status, 400);
    assert_eq!(post(&format!("{url}/rulings/2/decision"), &auth, body).status, 404);
    assert_eq!(post(&format!("{url}/rulings/x/decision"), &auth, body).status, 404);
    assert_eq!(std::fs::read_to_string(&decisions).unwrap(), "", "nothing written for a bad decision");
    let taken = post(&decide, &auth, body);
    assert_eq!(taken.status, 200, "{}", taken.text());
    let lines: Vec<Value> = std::fs::read_to_string(&decisions).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 1);
    assert_eq!((lines[0]["ruling"].as_u64(), lines[0]["decision"].as_str(), lines[0]["note"].as_str()), (Some(1), Some("uphold"), Some("the knight was touched")));
    // In the PGN after the ruling, served and on disk, under a new tag.
    let game = get(&format!("{url}/game.pgn"), &[("If-None-Match", &etag)]);
    assert_eq!(game.status, 200, "the decision changed the game");
    let flat = game.text().split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("} { arbiter: upheld: the knight was touched }"), "{flat}");
    assert_eq!(game.text(), std::fs::read_to_string(board.run_dir().join("game.pgn")).unwrap());
    // And to the clients on /events.
    let last = events.last().unwrap().0;
    let after = follow(&url, Some(last), Duration::from_secs(10), |e| !e.is_empty());
    assert_eq!(after.first().map(|e| (e.0, e.1["kind"].as_str(), e.1["decision"].as_str())), Some((last + 1, Some("decision"), Some("uphold"))));

    // The round: this board's game, with an ETag, and the board that is down named.
    std::thread::sleep(Duration::from_millis(1500));
    let pgn = get(&format!("{round_url}/round.pgn"), &[]);
    assert_eq!(pgn.status, 200);
    assert_eq!(pgn.text().trim_end(), game.text().trim_end(), "one game in the round: the board that is down never answered");
    let tag = pgn.header("etag").unwrap().to_string();
    assert_eq!(get(&format!("{round_url}/round.pgn"), &[("If-None-Match", &tag)]).status, 304);
    let health: Value = serde_json::from_slice(&get(&format!("{round_url}/healthz"), &[]).body).unwrap();
    assert_eq!(health["status"], "degraded");
    assert_eq!(health["boards"][0]["up"], true);
    assert_eq!((health["boards"][1]["up"].as_bool(), health["boards"][1]["url"].as_str()), (Some(false), Some(format!("{dead}/game.pgn").as_str())));
    drop(round);
}

#[test]
fn a_port_in_use_or_a_bad_token_file_exits_2_naming_it() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let live = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_touchmove"))
            .args(["live", "--source", &format!("{CLIP}/clip.mp4"), "--calibration", &format!("{CLIP}/calibration.json"), "--out"])
            .arg(std::env::temp_dir().join(format!("touchmove-serve-refused-{}", std::process::id())))
            .args(extra)
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (code, stderr) = live(&["--serve", &addr]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains(&format!("cannot listen on {addr}")), "{stderr}");
    let (code, stderr) = live(&["--serve", "127.0.0.1:0", "--token-file", "no/such/token"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--token-file no/such/token"), "{stderr}");
    let (code, stderr) = {
        let out = Command::new(env!("CARGO_BIN_EXE_touchmove")).args(["round", "http://127.0.0.1:9", "--serve", &addr]).output().unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains(&format!("cannot listen on {addr}")), "{stderr}");
    drop(taken);
}

/// The Chrome DevTools protocol over a page's WebSocket: one command at a time.
struct DevTools {
    socket: tungstenite::WebSocket<std::net::TcpStream>,
    id: u64,
}

impl DevTools {
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        let id = self.id;
        self.socket.send(tungstenite::Message::text(serde_json::json!({"id": id, "method": method, "params": params}).to_string())).unwrap();
        loop {
            let message = self.socket.read().expect("Chromium answers");
            let Ok(text) = message.to_text() else { continue };
            let answer: Value = serde_json::from_str(text).unwrap_or_default();
            if answer["id"] == id {
                assert!(answer.get("error").is_none(), "{method}: {answer}");
                return answer["result"].clone();
            }
        }
    }

    fn text_of(&mut self, expression: &str) -> String {
        self.call("Runtime.evaluate", serde_json::json!({"expression": expression, "returnByValue": true}))["result"]["value"].as_str().unwrap_or_default().to_string()
    }
}

/// Headless Chromium, killed on drop, and its profile, removed after it.
struct Chromium {
    child: Child,
    _profile: tempfile::TempDir,
}

impl Drop for Chromium {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_arbiters_page_shows_the_moves_and_the_ruling_in_headless_chromium() {
    let board = board();
    let profile = tempfile::tempdir().unwrap();
    let binary = std::env::var("CHROMIUM").unwrap_or_else(|_| "chromium".into());
    let child = Command::new(&binary)
        .args(["--headless", "--disable-gpu", "--no-sandbox", "--no-first-run", "--remote-debugging-port=0", "--window-size=1280,1000"])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("about:blank")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{binary} cannot start ({e}): this test needs Debian's chromium package, which scripts/setup installs (or set CHROMIUM to a Chromium binary)"));
    let mut chromium = Chromium { child, _profile: profile };
    // "DevTools listening on ws://127.0.0.1:PORT/devtools/browser/ID"
    let mut stderr = BufReader::new(chromium.child.stderr.take().unwrap());
    let mut line = String::new();
    let port = loop {
        line.clear();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "Chromium ended without its DevTools address");
        if let Some(rest) = line.trim().strip_prefix("DevTools listening on ws://127.0.0.1:") {
            break rest.split('/').next().unwrap().to_string();
        }
    };
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    let targets: Value = serde_json::from_slice(&get(&format!("http://127.0.0.1:{port}/json/list"), &[]).body).unwrap();
    let page = targets.as_array().unwrap().iter().find(|t| t["type"] == "page").expect("a page");
    let ws = page["webSocketDebuggerUrl"].as_str().unwrap();
    let stream = std::net::TcpStream::connect(format!("127.0.0.1:{port}")).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let (socket, _) = tungstenite::client(ws, stream).expect("the DevTools WebSocket");
    let mut devtools = DevTools { socket, id: 0 };

    devtools.call("Page.navigate", serde_json::json!({"url": format!("{}/", board.url)}));
    let deadline = Instant::now() + Duration::from_secs(90);
    let (moves, rulings, banner) = loop {
        let moves = devtools.text_of("document.getElementById('moves') ? document.getElementById('moves').innerText : ''");
        let rulings = devtools.text_of("document.getElementById('rulings') ? document.getElementById('rulings').innerText : ''");
        let banner = devtools.text_of("(function(){const b=document.getElementById('banner');return b && getComputedStyle(b).display !== 'none' ? b.innerText : '';})()");
        if moves.contains("Bc4") && rulings.contains("4.3.1") && !banner.is_empty() {
            break (moves, rulings, banner);
        }
        assert!(Instant::now() < deadline, "within 90 s the page shows the move and the ruling; it shows moves {moves:?}, rulings {rulings:?}, banner {banner:?}");
        std::thread::sleep(Duration::from_millis(250));
    };
    let recorded = std::fs::read_to_string(board.run_dir().join("rulings.jsonl")).unwrap();
    let decided = recorded.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()).find(|r| r["kind"] == "ruling").expect("the ruling on disk");
    let required: Vec<&str> = decided["required"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
    assert!(rulings.contains("violation") && rulings.contains(&format!("Required moves: {}", required.join(", "))), "{rulings}");
    assert!(banner.contains("VIOLATION 4.3.1"), "{banner}");
    assert!(moves.contains("0:05"), "the move's time: {moves}");
    // The board diagram: 64 squares, the bishop on c4 once the move shows.
    let c4 = devtools.text_of("Array.from(document.querySelectorAll('#board div')).filter(d => d.title === 'c4').map(d => d.textContent).join('')");
    assert_eq!(c4, "\u{2657}", "a white bishop on c4");
    let image = devtools.text_of("(function(){const i=document.querySelector('.ruling img');return i && i.complete && i.naturalWidth > 0 ? i.src : '';})()");
    assert!(image.contains("/evidence/"), "the evidence image loaded: {image:?}");
    // The clip plays: muted, it starts by itself, and its time moves on.
    let played = loop {
        let played = devtools.text_of("(function(){const v=document.querySelector('.ruling video');return v && v.readyState >= 2 && v.currentTime > 0 ? v.currentSrc + ' ' + v.videoWidth : '';})()");
        if !played.is_empty() {
            break played;
        }
        assert!(Instant::now() < deadline, "within 90 s the page plays the ruling's clip");
        std::thread::sleep(Duration::from_millis(250));
    };
    assert!(played.contains("/evidence/") && played.ends_with(" 432"), "the clip played: {played:?}");

    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).parent().unwrap();
    let shot = devtools.call("Page.captureScreenshot", serde_json::json!({"format": "png"}));
    let png = data_encoding::BASE64.decode(shot["data"].as_str().unwrap().as_bytes()).unwrap();
    assert_eq!(&png[1..4], b"PNG");
    std::fs::write(target.join("arbiter-page.png"), png).unwrap();
    let dom = devtools.text_of("document.documentElement.outerHTML");
    std::fs::write(target.join("arbiter-page.html"), dom).unwrap();
}
