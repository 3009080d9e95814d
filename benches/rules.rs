//! Events through the rule engine: how many physical events a second it can rule on.
//!
//! The stream is made of pseudo-random legal games played the way a tracker reports them (a
//! touch, a lift, captures removed, the release, castling rook moves, promotion exchanges, a
//! clock press), so every path of a normal move is exercised. `engine` times the engine alone,
//! `parse+engine` adds reading the JSON Lines.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use shakmaty::{Chess, Move, Piece, Position, Square};
use touchmove::events::{Action, Event, Hand};
use touchmove::rules::{Engine, Options};

/// A small deterministic generator (xorshift), so every run times the same games.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// The events of `m` played cleanly by hand 1 of the side to move, from time `t`.
fn events_for(pos: &Chess, m: Move, t: &mut f64, out: &mut Vec<Event>) {
    let hand = Hand { side: pos.turn(), number: 1 };
    let mut push = |action| {
        *t += 0.25;
        out.push(Event { t: *t, action, hand, conf: Some(0.95), hand_conf: None });
    };
    let from = m.from().expect("standard chess moves have an origin");
    push(Action::Touch(from));
    push(Action::Lift(from));
    match m {
        Move::EnPassant { from, to } => push(Action::Remove(Some(Square::from_coords(to.file(), from.rank())))),
        Move::Normal { capture: Some(_), to, .. } => push(Action::Remove(Some(to))),
        _ => {}
    }
    match m {
        Move::Castle { king, rook } => {
            let side = if rook.file() > king.file() { shakmaty::CastlingSide::KingSide } else { shakmaty::CastlingSide::QueenSide };
            push(Action::Release(side.king_to(pos.turn())));
            push(Action::Lift(rook));
            push(Action::Release(side.rook_to(pos.turn())));
        }
        Move::Normal { to, promotion: Some(role), .. } => {
            push(Action::Remove(None));
            push(Action::Place { sq: to, piece: Piece { color: pos.turn(), role } });
        }
        _ => push(Action::Release(m.to())),
    }
    push(Action::Press);
}

/// About `n` events of pseudo-random legal games, each game from the initial position.
fn stream(n: usize) -> Vec<Vec<Event>> {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut games = Vec::new();
    let mut total = 0;
    while total < n {
        let mut pos = Chess::default();
        let mut events = Vec::new();
        let mut t = 0.0;
        for _ in 0..160 {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            // Prefer captures, castling and promotions a little, so they are common.
            let special: Vec<Move> = moves.iter().copied().filter(|m| m.is_capture() || m.is_castle() || m.is_promotion()).collect();
            let m = if !special.is_empty() && rng.below(3) == 0 { special[rng.below(special.len())] } else { moves[rng.below(moves.len())] };
            events_for(&pos, m, &mut t, &mut events);
            pos.play_unchecked(m);
        }
        total += events.len();
        games.push(events);
    }
    games
}

fn bench(c: &mut Criterion) {
    let games = stream(100_000);
    let n: usize = games.iter().map(Vec::len).sum();
    let opts = Options { clock: true, declarations: true, ..Options::default() };
    // The stream must be clean: a ruling or warning would mean the generator is wrong.
    let mut out = Vec::new();
    for game in &games {
        let mut engine = Engine::new(Chess::default(), opts);
        game.iter().for_each(|ev| {
            engine.apply(ev, &mut out);
        });
        engine.finish(&mut out);
    }
    assert!(out.iter().all(|r| matches!(r, touchmove::rules::Record::Move(_))), "the benchmark stream is not clean");
    let lines: Vec<Vec<String>> = games.iter().map(|g| g.iter().map(Event::to_json_line).collect()).collect();

    let mut group = c.benchmark_group("rules");
    group.throughput(Throughput::Elements(n as u64));
    group.sample_size(20);
    group.bench_function("engine", |b| {
        let mut out = Vec::with_capacity(1024);
        b.iter(|| {
            for game in &games {
                let mut engine = Engine::new(Chess::default(), opts);
                for ev in game {
                    engine.apply(ev, &mut out);
                    out.clear();
                }
                engine.finish(&mut out);
                out.clear();
            }
        })
    });
    group.bench_function("parse+engine", |b| {
        let mut out = Vec::with_capacity(1024);
        b.iter(|| {
            for game in &lines {
                let mut engine = Engine::new(Chess::default(), opts);
                for (i, line) in game.iter().enumerate() {
                    let ev = Event::parse(line, i + 1).expect("generated lines parse");
                    engine.apply(&ev, &mut out);
                    out.clear();
                }
                engine.finish(&mut out);
                out.clear();
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
