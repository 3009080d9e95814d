//! `touchmove rules` as a user runs it: the README's demo, bad input, and what survives it.

use std::process::{Command, Output};

fn touchmove(args: &[&str], stdin: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_touchmove"));
    cmd.args(args);
    match stdin {
        None => cmd.output().expect("touchmove runs"),
        Some(text) => {
            use std::io::Write;
            cmd.stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
            let mut child = cmd.spawn().expect("touchmove runs");
            child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
            child.wait_with_output().unwrap()
        }
    }
}

fn lines(out: &Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).expect("every output line is JSON")).collect()
}

#[test]
fn demo_game_gives_moves_rulings_and_pgn() {
    let dir = std::env::temp_dir().join(format!("touchmove-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pgn = dir.join("demo.pgn");
    let out = touchmove(&["rules", "--clock", "--declarations", "--pgn", pgn.to_str().unwrap(), "fixtures/rules/demo-game.jsonl"], None);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let records = lines(&out);
    let moves: Vec<&str> = records.iter().filter(|r| r["kind"] == "move").map(|r| r["san"].as_str().unwrap()).collect();
    assert_eq!(moves, ["e4", "e5", "Nf3", "Nc6", "Bc4", "Nf6", "O-O", "Bc5", "d3", "d6"]);
    let rulings: Vec<(String, String, String)> = records
        .iter()
        .filter(|r| r["kind"] == "ruling")
        .map(|r| (r["verdict"].as_str().unwrap().into(), r["article"].as_str().unwrap().into(), r["side"].as_str().unwrap().into()))
        .collect();
    let want = [("violation", "4.3.1", "b"), ("illegal", "7.5.4", "w"), ("violation", "4.7", "b"), ("violation", "6.2.3", "w")];
    assert_eq!(rulings, want.map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string())));
    assert_eq!(records.iter().filter(|r| r["kind"] == "claim_closed").count(), 2);
    let times: Vec<f64> = records.iter().map(|r| r["t"].as_f64().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "output in time order: {times:?}");
    let pgn = std::fs::read_to_string(&pgn).unwrap();
    let flat = pgn.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("2. Nf3 { [%ts 9.0] } 2... Nc6 { [%ts 15.5] } { 15.0s violation 4.3.1 (Black):"), "{pgn}");
    assert!(flat.ends_with("5... d6 { [%ts 49.0] } *"), "{pgn}");
    assert!(pgn.lines().all(|l| l.len() <= 80), "{pgn}");    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_malformed_line_stops_with_exit_2_naming_the_line_and_field_and_keeps_the_output() {
    let input = concat!(
        "{\"t\":1,\"ev\":\"touch\",\"sq\":\"g1\",\"hand\":\"w1\"}\n",
        "{\"t\":2,\"ev\":\"lift\",\"sq\":\"f1\",\"hand\":\"w1\"}\n",
        "{\"t\":3,\"ev\":\"release\",\"sq\":\"c4\",\"hand\":\"w1\"}\n",
        "{\"t\":4,\"ev\":\"lift\",\"sq\":\"b9\",\"hand\":\"b1\"}\n",
        "{\"t\":5,\"ev\":\"release\",\"sq\":\"c6\",\"hand\":\"b1\"}\n",
    );
    let fen = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2";
    let dir = std::env::temp_dir().join(format!("touchmove-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pgn = dir.join("partial.pgn");
    let out = touchmove(&["rules", "--declarations", "--fen", fen, "--pgn", pgn.to_str().unwrap(), "-"], Some(input));
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("-:4: field `sq`: \"b9\" is not a square"), "{stderr}");
    let records = lines(&out);
    assert_eq!(records.len(), 1, "the ruling made before the bad line is printed");
    assert_eq!(records[0]["article"], "4.3.1");
    assert!(std::fs::read_to_string(&pgn).unwrap().contains("4.3.1"), "the PGN keeps the ruling");    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn time_going_backwards_is_bad_input() {
    let input = "{\"t\":5,\"ev\":\"touch\",\"sq\":\"e2\",\"hand\":\"w1\"}\n{\"t\":4,\"ev\":\"touch\",\"sq\":\"d2\",\"hand\":\"w1\"}\n";
    let out = touchmove(&["rules", "-"], Some(input));
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("-:2: field `t`: 4 is earlier than the previous event's 5"), "{stderr}");
}

#[test]
fn a_bad_fen_or_missing_file_is_bad_input() {
    let out = touchmove(&["rules", "--fen", "not a fen", "fixtures/rules/s01.jsonl"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--fen"));
    let out = touchmove(&["rules", "no/such/file.jsonl"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no/such/file.jsonl: cannot open"));
}

#[test]
fn events_contradicting_the_board_warn_and_play_goes_on() {
    let input = concat!(
        "{\"t\":1,\"ev\":\"lift\",\"sq\":\"e4\",\"hand\":\"w1\"}\n",
        "{\"t\":2,\"ev\":\"release\",\"sq\":\"e5\",\"hand\":\"w2\"}\n",
        "{\"t\":3,\"ev\":\"lift\",\"sq\":\"e2\",\"hand\":\"w1\"}\n",
        "{\"t\":4,\"ev\":\"release\",\"sq\":\"e4\",\"hand\":\"w1\"}\n",
        "{\"t\":5,\"ev\":\"lift\",\"sq\":\"e7\",\"hand\":\"b1\"}\n",
        "{\"t\":6,\"ev\":\"release\",\"sq\":\"e5\",\"hand\":\"b1\"}\n",
    );
    let out = touchmove(&["rules", "-"], Some(input));
    assert!(out.status.success());
    let records = lines(&out);
    let kinds: Vec<&str> = records.iter().map(|r| r["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["warning", "warning", "move", "move"]);
}

#[test]
fn help_teaches_the_flags() {
    let out = touchmove(&["rules", "--help"], None);
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in ["--clock", "--declarations", "--time-control", "--pgn", "--fen", "Exit codes"] {
        assert!(help.contains(flag), "--help lacks {flag}");
    }
}

#[test]
fn the_pgn_is_rewritten_after_every_move_while_events_stream_in() {
    use std::io::Write;
    let dir = std::env::temp_dir().join(format!("touchmove-live-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pgn = dir.join("live.pgn");
    let mut child = Command::new(env!("CARGO_BIN_EXE_touchmove"))
        .args(["rules", "--clock", "--pgn", pgn.to_str().unwrap(), "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"{\"t\":1,\"ev\":\"lift\",\"sq\":\"e2\",\"hand\":\"w1\"}\n{\"t\":2,\"ev\":\"release\",\"sq\":\"e4\",\"hand\":\"w1\"}\n{\"t\":3,\"ev\":\"press\",\"hand\":\"w1\"}\n")
        .unwrap();
    stdin.flush().unwrap();
    // The input is still open: the PGN must already hold the move.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !std::fs::read_to_string(&pgn).is_ok_and(|p| p.contains("1. e4")) {
        assert!(std::time::Instant::now() < deadline, "the PGN was not written while the input was open");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());    let _ = std::fs::remove_dir_all(&dir);
}
