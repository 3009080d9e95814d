//! The boards, the broker and the round together, against a real `nats-server` on loopback:
//! recorded games (the fixtures' games, with the clips' rulings and the arbiter's decisions)
//! published by several boards at once, and the round gathered from the broker, whose PGN must
//! end identical to the round the same records make with no broker between. Faults: the round
//! server restarted mid-round, the broker killed with SIGKILL and restarted on its store, a
//! board cut off from the broker. Then the binary: a token and NKeys refused, an unknown host, a
//! board id claimed twice, and `live --publish` of a fixture clip gathered by `round --nats`.
//! (The same runs at full size, 1,000 boards and a 30 s cut, are `examples/round_load.rs`.)

mod nats;

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nats::{NatsServer, Relay};
use touchmove::broker::{Broker, Credentials};
use touchmove::gather::{self, Round};
use touchmove::pgn::Tags;
use touchmove::publish::replay::{self, Timed};
use touchmove::publish::{Board, Identity, PublishMetrics};

/// The three fixture games at `pace` seconds a ply, a ruling every 9 plies.
fn scripts(pace: f64) -> Vec<Vec<Timed>> {
    replay::fixture_games(Path::new("fixtures/games"), Path::new("fixtures/clips"), pace, 9).unwrap()
}

/// Board `board` of round `round`, publishing to `url`, its outbox in `dir`.
async fn board(url: &str, round: &str, board: &str, dir: &Path, metrics: PublishMetrics) -> Board {
    let broker = Broker::connect(url, &Credentials::default(), "test board").await.unwrap();
    let home = dir.join(board);
    std::fs::create_dir_all(&home).unwrap();
    Board::start(broker, Identity::new(round, board, Tags::unknown("test")), &home.join("outbox.jsonl"), 100_000, &home, metrics).await.unwrap()
}

/// Follows `round` from `url` in a task of its own (aborted when the returned handle is).
async fn follow(url: &str, round: &Arc<Round>) -> tokio::task::JoinHandle<()> {
    let broker = Broker::connect(url, &Credentials::default(), "test round").await.unwrap();
    tokio::spawn(gather::follow(broker, round.clone()))
}

/// Waits until the round's PGN is `expected`, for up to `within`; panics showing the first
/// difference.
async fn until_same(round: &Round, expected: &str, within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        let got = round.games().pgn();
        if &*got == expected {
            return;
        }
        if Instant::now() > deadline {
            let at = got.bytes().zip(expected.bytes()).position(|(a, b)| a != b).unwrap_or(got.len().min(expected.len()));
            let from = at.saturating_sub(200);
            panic!("the round's PGN ({} bytes) is not the reference ({} bytes); first difference at {at}:\n--- got\n{}\n--- expected\n{}", got.len(), expected.len(), &got[from..(at + 200).min(got.len())], &expected[from..(at + 200).min(expected.len())]);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Boards `1..=n` playing the fixture games in turn, and the round they make with no broker.
fn round_of(n: usize, pace: f64) -> (Vec<(String, Vec<Timed>)>, String) {
    let games = scripts(pace);
    let boards: Vec<(String, Vec<Timed>)> = (0..n).map(|i| ((i + 1).to_string(), games[i % games.len()].clone())).collect();
    let borrowed: Vec<(String, &[Timed])> = boards.iter().map(|(b, s)| (b.clone(), s.as_slice())).collect();
    let expected = replay::reference(&borrowed, &Tags::unknown("test")).pgn().to_string();
    (boards, expected)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_round_server_restarted_mid_round_catches_up_with_nothing_lost_or_twice() {
    let server = NatsServer::start();
    let dir = tempfile::tempdir().unwrap();
    let (boards, expected) = round_of(6, 0.03);
    let first = Arc::new(Round::new("5"));
    let following = follow(&server.url(), &first).await;
    let mut playing = Vec::new();
    for (id, script) in boards {
        let board = board(&server.url(), "5", &id, dir.path(), PublishMetrics::default()).await;
        playing.push(tokio::spawn(async move { replay::play(board, &script, 1.0, 10.0).await }));
    }
    tokio::time::sleep(Duration::from_millis(1200)).await;
    following.abort();
    let taken_before = first.games().version();
    assert!(taken_before > 0, "the first round server took records before it stopped");
    tokio::time::sleep(Duration::from_millis(500)).await;
    // Started again: what the first had acknowledged is read again, the rest follows.
    let second = Arc::new(Round::new("5"));
    let _following = follow(&server.url(), &second).await;
    for p in playing {
        assert_eq!(p.await.unwrap(), 0, "every record reached the broker");
    }
    until_same(&second, &expected, Duration::from_secs(20)).await;
    assert!(second.caught_up());
    assert_eq!(expected.matches("[Event ").count(), 6);
    assert_eq!(expected.matches("arbiter: upheld").count() + expected.matches("arbiter: dismissed").count(), expected.matches(" violation ").count() + expected.matches(" illegal ").count() + expected.matches(" judgement ").count());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_server_stopped_with_a_batch_delivered_but_not_all_acknowledged_loses_none_of_it() {
    let server = NatsServer::start();
    let dir = tempfile::tempdir().unwrap();
    let (boards, expected) = round_of(2, 0.01);
    let mut playing = Vec::new();
    for (id, script) in boards {
        let board = board(&server.url(), "6", &id, dir.path(), PublishMetrics::default()).await;
        playing.push(tokio::spawn(async move { replay::play(board, &script, 1.0, 10.0).await }));
    }
    for p in playing {
        assert_eq!(p.await.unwrap(), 0, "every record reached the broker");
    }
    // A round server that was delivered a batch of 60 and stopped having acknowledged 20 of
    // them: the other 40 come again only after the acknowledgement wait (30 s).
    let broker = Broker::connect(&server.url(), &Credentials::default(), "test round").await.unwrap();
    let stream = broker.events().await.unwrap();
    let consumer: async_nats::jetstream::consumer::PullConsumer = stream.get_or_create_consumer(&gather::durable_name("6"), gather::durable_config("6")).await.unwrap();
    let mut batch = consumer.fetch().max_messages(60).messages().await.unwrap();
    let first = Arc::new(Round::new("6"));
    for i in 0..60 {
        let message = futures_util::StreamExt::next(&mut batch).await.unwrap().unwrap();
        let info = message.info().unwrap();
        first.take(info.stream_sequence, info.published.unix_timestamp_nanos(), &message.payload);
        if i < 20 {
            message.ack().await.unwrap();
        }
    }
    drop(batch);
    // Started again, well within the wait: every record is in the round, once.
    let second = Arc::new(Round::new("6"));
    let _following = follow(&server.url(), &second).await;
    until_same(&second, &expected, Duration::from_secs(10)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broker_killed_and_restarted_mid_round_loses_nothing_and_repeats_nothing() {
    let mut server = NatsServer::start();
    let dir = tempfile::tempdir().unwrap();
    let (boards, expected) = round_of(6, 0.05);
    let round = Arc::new(Round::new("7"));
    let _following = follow(&server.url(), &round).await;
    let mut playing = Vec::new();
    for (id, script) in boards {
        let board = board(&server.url(), "7", &id, dir.path(), PublishMetrics::default()).await;
        playing.push(tokio::spawn(async move { replay::play(board, &script, 1.0, 30.0).await }));
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    server.kill9();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = round.games().version();
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert_eq!(round.games().version(), before, "nothing reaches the round while the broker is down");
    server.restart();
    for p in playing {
        assert_eq!(p.await.unwrap(), 0, "every record reached the broker once it was back");
    }
    until_same(&round, &expected, Duration::from_secs(30)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_board_cut_off_from_the_broker_sends_what_waited_in_order() {
    let server = NatsServer::start();
    let relay = Relay::to(server.port);
    let dir = tempfile::tempdir().unwrap();
    let (boards, expected) = round_of(2, 0.04);
    let round = Arc::new(Round::new("9"));
    let _following = follow(&server.url(), &round).await;
    let cut_off = PublishMetrics::default();
    let mut playing = Vec::new();
    for (i, (id, script)) in boards.into_iter().enumerate() {
        // Board 1 reaches the broker through the relay, board 2 directly.
        let url = if i == 0 { relay.url() } else { server.url() };
        let board = board(&url, "9", &id, dir.path(), if i == 0 { cut_off.clone() } else { PublishMetrics::default() }).await;
        playing.push(tokio::spawn(async move { replay::play(board, &script, 1.0, 30.0).await }));
    }
    tokio::time::sleep(Duration::from_millis(800)).await;
    relay.cut();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let waiting = cut_off.waiting.get();
    assert!(waiting > 0, "records wait in the cut-off board's outbox");
    assert_eq!(cut_off.connected.get(), 0);
    relay.restore();
    for p in playing {
        assert_eq!(p.await.unwrap(), 0);
    }
    until_same(&round, &expected, Duration::from_secs(20)).await;
    assert_eq!(cut_off.waiting.get(), 0);
    assert_eq!(cut_off.connected.get(), 1);
    assert_eq!(cut_off.dropped.get(), 0);
}

/// The binary's exit code and stderr for `args`, given at most `within`.
fn touchmove(args: &[&str], within: Duration) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_touchmove")).args(args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let deadline = Instant::now() + within;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
            return (status.code(), err);
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            return (None, String::new());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_broker_that_cannot_be_reached_or_refuses_the_credentials_is_said_at_the_start() {
    let server = NatsServer::with_args(&["--auth", "s3cret-token"]);
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good");
    let bad = dir.path().join("bad");
    std::fs::write(&good, "s3cret-token\n").unwrap();
    std::fs::write(&bad, "wrong\n").unwrap();
    let url = server.url();
    let serve = format!("127.0.0.1:{}", nats::free_port());
    let within = Duration::from_secs(20);
    for (args, why) in [
        (vec!["round", "--nats", &url, "--round", "5", "--serve", &serve], "refuses the credentials"),
        (vec!["round", "--nats", &url, "--round", "5", "--serve", &serve, "--nats-token-file", bad.to_str().unwrap()], "refuses the credentials"),
        (vec!["queue", "status", "--nats", &url], "refuses the credentials"),
        (vec!["queue", "status", "--nats", "nats://no-such-host.invalid:4222"], "does not resolve"),
        (vec!["queue", "status", "--nats", "http://127.0.0.1:4222"], "not a NATS URL"),
        (vec!["queue", "status", "--nats", &url, "--nats-token-file", "/no/such/file"], "/no/such/file"),
    ] {
        let (code, err) = touchmove(&args, within);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains(why), "{args:?}: {err}");
        if !why.starts_with('/') && !why.contains("NATS URL") {
            assert!(err.contains("nats://"), "the URL is named: {err}");
        }
    }
    let (code, err) = touchmove(&["queue", "status", "--nats", &url, "--nats-token-file", good.to_str().unwrap()], within);
    assert_eq!(code, Some(0), "{err}");
}

/// A `touchmove` process killed when dropped.
struct Running(std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn get(url: &str, headers: &[(&str, &str)]) -> (u16, Option<String>, String) {
    let agent: ureq::Agent = ureq::Agent::config_builder().timeout_global(Some(Duration::from_secs(5))).http_status_as_error(false).build().into();
    let mut request = agent.get(url);
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let mut response = request.call().unwrap_or_else(|e| panic!("GET {url}: {e}"));
    let tag = response.headers().get("etag").and_then(|v| v.to_str().ok()).map(str::to_string);
    (response.status().as_u16(), tag, response.body_mut().read_to_string().unwrap_or_default())
}

#[test]
fn live_publishes_a_clip_that_round_gathers_and_a_second_board_with_its_id_is_refused() {
    let server = NatsServer::start();
    let dir = tempfile::tempdir().unwrap();
    let clip = Path::new("fixtures/clips/touch-own-4.3.1");
    let out = dir.path().join("board1");
    let live = |out: &Path| {
        Command::new(env!("CARGO_BIN_EXE_touchmove"))
            .args(["live", "--source"])
            .arg(clip.join("clip.mp4"))
            .arg("--calibration")
            .arg(clip.join("calibration.json"))
            .arg("--out")
            .arg(out)
            .args(["--round", "3", "--white", "Doe, Jane", "--black", "Roe, Rick", "--min-conf", "0.3", "--publish", &server.url(), "--board", "1"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let mut board = Running(live(&out));
    // The first board has claimed its id once its outbox is there.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !out.join("outbox.jsonl").exists() {
        assert!(Instant::now() < deadline, "the board did not start publishing");
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut second = live(&dir.path().join("board1-again"));
    let status = second.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(second.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(2), "{err}");
    assert!(err.contains("board \"1\" of round \"3\" is already on nats://"), "{err}");
    let port = nats::free_port();
    let _round = Running(
        Command::new(env!("CARGO_BIN_EXE_touchmove")).args(["round", "--nats", &server.url(), "--round", "3", "--serve", &format!("127.0.0.1:{port}")]).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap(),
    );
    let ended = board.0.wait().unwrap();
    assert!(ended.success(), "live ended {ended:?}");
    let game = std::fs::read_to_string(out.join("game.pgn")).unwrap();
    assert!(game.contains("Bc4") && game.contains("4.3.1"), "{game}");
    let base = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(20);
    let (tag, text) = loop {
        if let Ok((200, tag, text)) = std::panic::catch_unwind(|| get(&format!("{base}/round.pgn"), &[]))
            && text == game
        {
            break (tag.unwrap(), text);
        }
        assert!(Instant::now() < deadline, "the round's PGN did not become the board's game.pgn");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(text.contains("[White \"Doe, Jane\"]"));
    assert_eq!(get(&format!("{base}/round.pgn"), &[("If-None-Match", &tag)]).0, 304);
    assert_eq!(get(&format!("{base}/boards/1.pgn"), &[]).2, game);
    let boards: serde_json::Value = serde_json::from_str(&get(&format!("{base}/boards.json"), &[]).2).unwrap();
    assert_eq!(boards["boards"][0]["last_move"], "Bc4");
    assert_eq!(boards["boards"][0]["ended"], true);
    assert_eq!(boards["boards"][0]["open_rulings"][0]["article"], "4.3.1");
    let page = get(&format!("{base}/"), &[]).2;
    assert!(page.contains("EventSource('/events')"), "the round page follows /events");
    // /events from the start: the move and the ruling, with the stream's sequence as ids.
    let mut events = String::new();
    let agent: ureq::Agent = ureq::Agent::config_builder().timeout_global(Some(Duration::from_secs(2))).build().into();
    if let Ok(mut response) = agent.get(&format!("{base}/events")).call() {
        let _ = std::io::Read::read_to_string(&mut response.body_mut().as_reader(), &mut events);
    }
    assert!(events.contains("\"kind\":\"move\"") && events.contains("\"kind\":\"ruling\"") && events.contains("\nid: "), "{events}");
    let metrics = get(&format!("{base}/metrics"), &[]).2;
    assert!(metrics.lines().any(|l| l == "touchmove_round_boards 1"), "{metrics}");
}

#[test]
fn a_broker_with_nkeys_admits_the_seed_it_knows_and_refuses_another() {
    let dir = tempfile::tempdir().unwrap();
    let known = nkeys::KeyPair::new_user();
    let stranger = nkeys::KeyPair::new_user();
    let config = dir.path().join("nats.conf");
    std::fs::write(&config, format!("authorization {{\n  users = [{{ nkey: {} }}]\n}}\n", known.public_key())).unwrap();
    let server = NatsServer::with_args(&["-c", config.to_str().unwrap()]);
    let (known_seed, stranger_seed) = (dir.path().join("known.nk"), dir.path().join("stranger.nk"));
    std::fs::write(&known_seed, known.seed().unwrap() + "\n").unwrap();
    std::fs::write(&stranger_seed, stranger.seed().unwrap() + "\n").unwrap();
    let within = Duration::from_secs(20);
    let url = server.url();
    let (code, err) = touchmove(&["queue", "status", "--nats", &url, "--nats-nkey", known_seed.to_str().unwrap()], within);
    assert_eq!(code, Some(0), "{err}");
    for refused in [vec!["--nats-nkey", stranger_seed.to_str().unwrap()], vec![]] {
        let mut args = vec!["queue", "status", "--nats", &url];
        args.extend(refused.iter().copied());
        let (code, err) = touchmove(&args, within);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains("refuses the credentials") && err.contains(&url), "{err}");
    }
}
