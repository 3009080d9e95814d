//! The 50 worked scenarios of `../shared/rules/article4-scenarios.md` (and their variants), as
//! committed in `fixtures/rules/`: each is run through the engine as played and with the
//! colours swapped, and must give exactly the expected rulings, moves and closed claims.

use std::path::Path;

use serde::Deserialize;
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Color, EnPassantMode, Piece};
use touchmove::events::{Action, Event, Hand, Reader};
use touchmove::rules::{Engine, Options, Record, TimeControl};

#[derive(Deserialize)]
struct Scenario {
    id: String,
    fen: String,
    events: String,
    flags: Vec<String>,
    expect: Vec<Expected>,
    #[serde(default)]
    moves: Option<Vec<String>>,
    #[serde(default)]
    claims_closed: usize,
}

#[derive(Deserialize, Debug, Clone, PartialEq)]
struct Expected {
    verdict: String,
    article: String,
    side: String,
    required: Vec<String>,
}

fn scenarios() -> Vec<Scenario> {
    let text = std::fs::read_to_string("fixtures/rules/scenarios.json").expect("fixtures/rules/scenarios.json");
    serde_json::from_str(&text).expect("scenarios.json parses")
}

fn options(flags: &[String]) -> Options {
    let mut opts = Options::default();
    let mut it = flags.iter();
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--clock" => opts.clock = true,
            "--declarations" => opts.declarations = true,
            "--time-control" => {
                opts.time_control = match it.next().map(String::as_str) {
                    Some("rapid") => TimeControl::Rapid,
                    Some("blitz") => TimeControl::Blitz,
                    _ => TimeControl::Standard,
                }
            }
            other => panic!("unknown flag {other}"),
        }
    }
    opts
}

fn events(file: &str) -> Vec<Event> {
    let f = std::fs::File::open(Path::new("fixtures/rules").join(file)).expect("events file");
    Reader::new(std::io::BufReader::new(f)).map(|e| e.expect("fixture parses")).collect()
}

/// The same events with the colours swapped and the board turned over.
fn mirror_event(ev: &Event) -> Event {
    let sq = |s: shakmaty::Square| s.flip_vertical();
    let pc = |p: Piece| Piece { color: p.color.other(), role: p.role };
    let action = match ev.action {
        Action::Touch(s) => Action::Touch(sq(s)),
        Action::Brush(s) => Action::Brush(sq(s)),
        Action::Lift(s) => Action::Lift(sq(s)),
        Action::Contact { sq: s, piece } => Action::Contact { sq: sq(s), piece: piece.map(pc) },
        Action::Release(s) => Action::Release(sq(s)),
        Action::Remove(s) => Action::Remove(s.map(sq)),
        Action::Place { sq: s, piece } => Action::Place { sq: sq(s), piece: pc(piece) },
        Action::Knock(s) => Action::Knock(sq(s)),
        Action::Adjust => Action::Adjust,
        Action::Press => Action::Press,
    };
    Event { action, hand: Hand { side: ev.hand.side.other(), number: ev.hand.number }, ..*ev }
}

fn mirror_uci(uci: &str) -> String {
    uci.chars().map(|c| if c.is_ascii_digit() { char::from(b'9' - (c as u8 - b'0')) } else { c }).collect()
}

fn mirror_expected(e: &Expected) -> Expected {
    let mut required: Vec<String> = e.required.iter().map(|u| mirror_uci(u)).collect();
    required.sort();
    Expected { side: if e.side == "w" { "b".into() } else { "w".into() }, required, ..e.clone() }
}

struct Outcome {
    rulings: Vec<Expected>,
    moves: Vec<String>,
    claims_closed: usize,
    warnings: Vec<String>,
}

fn run(pos: Chess, opts: Options, events: &[Event]) -> Outcome {
    let mut engine = Engine::new(pos, opts);
    let mut out = Vec::new();
    for ev in events {
        engine.apply(ev, &mut out);
    }
    engine.finish(&mut out);
    let mut outcome = Outcome { rulings: Vec::new(), moves: Vec::new(), claims_closed: 0, warnings: Vec::new() };
    for record in out {
        match record {
            Record::Ruling(r) => outcome.rulings.push(Expected {
                verdict: r.verdict.as_str().into(),
                article: r.article.as_str().into(),
                side: r.side.char().to_string(),
                required: r.required.iter().map(|&m| touchmove::rules::record::uci(m)).collect(),
            }),
            Record::Move(m) => outcome.moves.push(m.san),
            Record::ClaimClosed(_) => outcome.claims_closed += 1,
            Record::Warning(w) => outcome.warnings.push(w.text),
            Record::Correction(c) => outcome.warnings.push(c.text),
        }
    }
    outcome
}

fn check(id: &str, outcome: &Outcome, expect: &[Expected], moves: Option<&[String]>, claims: usize, failures: &mut Vec<String>) {
    if outcome.rulings != expect {
        failures.push(format!("{id}: rulings\n   got  {:?}\n   want {:?}", outcome.rulings, expect));
    }
    if let Some(moves) = moves
        && outcome.moves != moves
    {
        failures.push(format!("{id}: moves got {:?} want {:?}", outcome.moves, moves));
    }
    if outcome.claims_closed != claims {
        failures.push(format!("{id}: claims closed got {} want {claims}", outcome.claims_closed));
    }
    if !outcome.warnings.is_empty() {
        failures.push(format!("{id}: unexpected warnings {:?}", outcome.warnings));
    }
}

#[test]
fn every_scenario_gives_its_ruling_in_both_colours() {
    let all = scenarios();
    assert!(all.len() >= 50, "expected the 50 scenarios and variants, found {}", all.len());
    let mut failures = Vec::new();
    for s in &all {
        let fen: Fen = s.fen.parse().expect("scenario FEN");
        let pos: Chess = fen.clone().into_position(CastlingMode::Standard).expect("legal FEN");
        let evs = events(&s.events);
        let opts = options(&s.flags);
        check(&s.id, &run(pos, opts, &evs), &s.expect, s.moves.as_deref(), s.claims_closed, &mut failures);

        let mirrored: Chess = fen.into_setup().into_mirrored().position(CastlingMode::Standard).expect("mirrored FEN");
        let mevs: Vec<Event> = evs.iter().map(mirror_event).collect();
        let mexpect: Vec<Expected> = s.expect.iter().map(mirror_expected).collect();
        let outcome = run(mirrored.clone(), opts, &mevs);
        check(&format!("{} (colours swapped, {})", s.id, Fen::from_position(&mirrored, EnPassantMode::Legal)), &outcome, &mexpect, None, s.claims_closed, &mut failures);
        assert_eq!(outcome.moves.len(), s.moves.as_ref().map_or(outcome.moves.len(), Vec::len), "{}: mirrored move count", s.id);
    }
    assert!(failures.is_empty(), "{} of {} scenarios failed:\n{}", failures.len(), all.len() * 2, failures.join("\n"));
}

#[test]
fn the_engine_follows_the_move_actually_played_after_a_breach() {
    // S01, then Black answers: the game goes on from Bc4, not from the required knight move.
    let s = scenarios().into_iter().find(|s| s.id == "S01").unwrap();
    let pos: Chess = s.fen.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap();
    let mut evs = events(&s.events);
    let t = evs.last().unwrap().t;
    let b = Hand { side: Color::Black, number: 1 };
    evs.push(Event { t: t + 1.0, action: Action::Lift("g8".parse().unwrap()), hand: b, conf: None, hand_conf: None });
    evs.push(Event { t: t + 2.0, action: Action::Release("f6".parse().unwrap()), hand: b, conf: None, hand_conf: None });
    evs.push(Event { t: t + 3.0, action: Action::Press, hand: b, conf: None, hand_conf: None });
    let outcome = run(pos, options(&s.flags), &evs);
    assert_eq!(outcome.moves, ["Bc4", "Nf6"]);
    assert_eq!(outcome.rulings.len(), 1);
}

#[test]
fn the_command_line_reproduces_every_scenario() {
    let mut failures = Vec::new();
    for s in scenarios() {
        let mut args = vec!["rules".to_string(), "--fen".into(), s.fen.clone()];
        args.extend(s.flags.iter().cloned());
        args.push(format!("fixtures/rules/{}", s.events));
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_touchmove")).args(&args).output().expect("touchmove runs");
        if !out.status.success() {
            failures.push(format!("{}: exit {:?}: {}", s.id, out.status.code(), String::from_utf8_lossy(&out.stderr)));
            continue;
        }
        let rulings: Vec<Expected> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("JSON line"))
            .filter(|r| r["kind"] == "ruling")
            .map(|r| Expected {
                verdict: r["verdict"].as_str().unwrap().into(),
                article: r["article"].as_str().unwrap().into(),
                side: r["side"].as_str().unwrap().into(),
                required: r["required"].as_array().unwrap().iter().map(|m| m.as_str().unwrap().to_string()).collect(),
            })
            .collect();
        if rulings != s.expect {
            failures.push(format!("{}: got {rulings:?} want {:?}", s.id, s.expect));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
