//! Shared by the fuzz targets: how the first two input bytes choose the engine's options and
//! its start position. `fuzz/seed.sh` writes the same two bytes in front of each fixture.

#![allow(dead_code)]

use std::sync::OnceLock;

use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess};
use touchmove::rules::{Engine, Options, TimeControl};

/// The start positions, one FEN a line (`fuzz/fens.txt`): the four named in the fuzzing brief
/// first, then every other start position of `fixtures/rules/scenarios.json`, then a few with
/// Black to move.
pub const FENS: &str = include_str!("../fens.txt");

pub fn positions() -> &'static [(String, Chess)] {
    static POSITIONS: OnceLock<Vec<(String, Chess)>> = OnceLock::new();
    POSITIONS.get_or_init(|| {
        FENS.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let pos = l.parse::<Fen>().expect("fens.txt: FEN").into_position(CastlingMode::Standard).expect("fens.txt: legal");
                (l.to_string(), pos)
            })
            .collect()
    })
}

/// Byte 0: bit 0 `--clock`, bit 1 `--declarations`, bits 2-3 time control (standard, rapid,
/// blitz, standard), bits 4-5 `min_conf` (0.7, 0.0, 0.5, 1.0). Byte 1: index into `FENS`
/// (modulo their number).
pub fn setup(b0: u8, b1: u8) -> (Options, &'static str, Chess) {
    let opts = Options {
        clock: b0 & 1 != 0,
        declarations: b0 & 2 != 0,
        time_control: match (b0 >> 2) & 3 {
            1 => TimeControl::Rapid,
            2 => TimeControl::Blitz,
            _ => TimeControl::Standard,
        },
        min_conf: [0.7, 0.0, 0.5, 1.0][usize::from((b0 >> 4) & 3)],
    };
    let all = positions();
    let (fen, pos) = &all[usize::from(b1) % all.len()];
    (opts, fen, pos.clone())
}

/// The engine the first two bytes of `data` ask for, and the rest of the input; `None` when the
/// input is too short. With `TOUCHMOVE_FUZZ_DUMP` set, prints the options and the FEN.
pub fn start(data: &[u8]) -> Option<(Engine, &[u8])> {
    let [b0, b1, rest @ ..] = data else { return None };
    let (opts, fen, pos) = setup(*b0, *b1);
    if dump() {
        eprintln!("# fen: {fen}\n# options: {opts:?}");
    }
    Some((Engine::new(pos, opts), rest))
}

/// Whether `TOUCHMOVE_FUZZ_DUMP` is set: the targets then print the options, the FEN and the
/// events they fed, as JSON Lines, to stderr (to turn a crash input into a reproducer).
pub fn dump() -> bool {
    static DUMP: OnceLock<bool> = OnceLock::new();
    *DUMP.get_or_init(|| std::env::var_os("TOUCHMOVE_FUZZ_DUMP").is_some())
}
