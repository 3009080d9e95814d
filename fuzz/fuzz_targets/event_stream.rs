//! Structured events: every byte group is decoded straight into an `Event`, so the fuzzer
//! reaches deep engine states (captures, castling, promotion, presses, two hands, illegal and
//! changed moves, resynchronisation) without having to learn JSON.
//!
//! Input: byte 0 options, byte 1 start position (see `common.rs`), then operations. Each
//! operation is one op byte and, for most kinds, one argument byte (two for those that name a
//! piece):
//!
//! * op bits 0-3, the kind: 0 touch, 1 brush, 2 lift, 3 contact (held piece), 4 contact with an
//!   off-board piece, 5 release, 6 remove (square), 7 remove (put aside), 8 place, 9 knock,
//!   10 adjust, 11 press; 12 play the legal move `arg % n` of the current game position as
//!   lift/release (with the capture, the rook or the promotion exchange), 13 lift the piece of
//!   legal move `arg % n`, 14 release on the target of legal move `arg % n`, 15 touch the
//!   origin (`arg & 0x80 == 0`) or the target of legal move `arg % n`;
//! * op bit 4: the hand belongs to the side to move (0) or to the other side (1);
//! * op bit 5: hand number 1 or 2;
//! * op bit 6: time advances by one second before the event (else: same time as the last);
//! * op bit 7: the event carries a confidence, from one more byte (`b % 101 / 100`); hand 2's
//!   events carry it as their `hand_conf` too.
//!
//! A square argument is `arg & 63`; a piece byte is role `b % 6` of the side to move, or of the
//! other side if `b & 0x40`.
//!
//! Besides "never panics", every event must survive `to_json_line` -> `Event::parse` unchanged.

#![no_main]

use libfuzzer_sys::fuzz_target;
use shakmaty::{Color, Move, Piece, Position, Role, Square};
use touchmove::events::{Action, Event, Hand};

#[path = "common.rs"]
mod common;

/// At most this many events per input, to keep executions fast.
const MAX_EVENTS: usize = 600;

struct Input<'a> {
    data: &'a [u8],
}

impl Input<'_> {
    fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }
}

fn square(b: u8) -> Square {
    Square::new(u32::from(b & 63))
}

fn piece(b: u8, mover: Color) -> Piece {
    Piece { color: if b & 0x40 == 0 { mover } else { !mover }, role: Role::ALL[usize::from(b % 6)] }
}

fn captured_square(m: Move) -> Option<Square> {
    match m {
        Move::EnPassant { from, to } => Some(Square::from_coords(to.file(), from.rank())),
        Move::Normal { capture: Some(_), to, .. } => Some(to),
        _ => None,
    }
}

/// The events of playing `m` with `hand`; `variant` picks how a capture is done.
fn play(m: Move, hand: Hand, variant: bool, acts: &mut Vec<(Action, Hand)>) {
    match m {
        Move::Normal { from, to, capture, promotion, .. } => {
            if capture.is_some() && variant {
                // Take the captured piece off first, then move.
                acts.push((Action::Lift(to), hand));
                acts.push((Action::Remove(None), hand));
            }
            acts.push((Action::Lift(from), hand));
            // Without `variant`, release onto the captured piece (the engine takes it as captured).
            acts.push((Action::Release(to), hand));
            if let Some(role) = promotion {
                acts.push((Action::Remove(Some(to)), hand));
                acts.push((Action::Place { sq: to, piece: Piece { color: hand.side, role } }, hand));
            }
        }
        Move::EnPassant { from, to } => {
            acts.push((Action::Lift(from), hand));
            acts.push((Action::Release(to), hand));
            acts.push((Action::Remove(captured_square(m)), hand));
        }
        Move::Castle { king, rook } => {
            let side = m.castling_side().expect("castling move has a side");
            let color = hand.side;
            if variant {
                acts.push((Action::Touch(rook), hand));
            }
            acts.push((Action::Lift(king), hand));
            acts.push((Action::Release(side.king_to(color)), hand));
            acts.push((Action::Lift(rook), hand));
            acts.push((Action::Release(side.rook_to(color)), hand));
        }
        Move::Put { role, to } => {
            acts.push((Action::Place { sq: to, piece: Piece { color: hand.side, role } }, hand));
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((mut engine, rest)) = common::start(data) else { return };
    let mut input = Input { data: rest };
    let mut out = Vec::new();
    let mut t = 0u32;
    let mut count = 0;
    let mut acts: Vec<(Action, Hand)> = Vec::new();
    while !input.data.is_empty() && count < MAX_EVENTS {
        let op = input.byte();
        let game = engine.position();
        let mover = game.turn();
        let hand = Hand { side: if op & 0x10 == 0 { mover } else { !mover }, number: if op & 0x20 == 0 { 1 } else { 2 } };
        if op & 0x40 != 0 {
            t += 1;
        }
        let conf = (op & 0x80 != 0).then(|| f32::from(input.byte() % 101) / 100.0);
        let hand_conf = conf.filter(|_| op & 0x20 != 0);
        acts.clear();
        let kind = op & 0x0f;
        match kind {
            0..=9 | 12..=15 => {
                let arg = input.byte();
                let sq = square(arg);
                let legal = game.legal_moves();
                let pick = (!legal.is_empty()).then(|| legal[usize::from(arg) % legal.len()]);
                let variant = !legal.is_empty() && (usize::from(arg) / legal.len()) % 2 == 1;
                let action = match kind {
                    0 => Action::Touch(sq),
                    1 => Action::Brush(sq),
                    2 => Action::Lift(sq),
                    3 => Action::Contact { sq, piece: None },
                    4 => Action::Contact { sq, piece: Some(piece(input.byte(), mover)) },
                    5 => Action::Release(sq),
                    6 => Action::Remove(Some(sq)),
                    7 => Action::Remove(None),
                    8 => Action::Place { sq, piece: piece(input.byte(), mover) },
                    9 => Action::Knock(sq),
                    12 => {
                        match pick {
                            Some(m) => play(m, hand, variant, &mut acts),
                            None => acts.push((Action::Touch(sq), hand)),
                        }
                        Action::Adjust // unused: `acts` is filled
                    }
                    13 => Action::Lift(pick.and_then(|m| m.from()).unwrap_or(sq)),
                    14 => Action::Release(pick.map_or(sq, |m| m.to())),
                    _ => Action::Touch(match pick {
                        Some(m) if arg & 0x80 == 0 => m.from().unwrap_or(sq),
                        Some(m) => captured_square(m).unwrap_or(m.to()),
                        None => sq,
                    }),
                };
                if kind != 12 {
                    acts.push((action, hand));
                }
            }
            10 => acts.push((Action::Adjust, hand)),
            _ => acts.push((Action::Press, hand)),
        }
        for &(action, hand) in &acts {
            let ev = Event { t: f64::from(t), action, hand, conf, hand_conf };
            let line = ev.to_json_line();
            match Event::parse(&line, 1) {
                Ok(back) if back == ev => {}
                other => panic!("{ev:?} -> {line:?} -> {other:?}: the contract does not round-trip"),
            }
            if common::dump() {
                eprintln!("{line}");
            }
            engine.apply(&ev, &mut out);
            count += 1;
        }
    }
    engine.finish(&mut out);
    for record in &out {
        let json = serde_json::to_string(record).expect("a record serialises");
        serde_json::from_str::<serde_json::Value>(&json).expect("a serialised record is JSON");
    }
});
