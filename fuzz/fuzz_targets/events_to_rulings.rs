//! Text in, rulings out: arbitrary bytes as JSON Lines events through `Event::parse`, the
//! engine, and the rulings serialiser. Nothing on the way may panic.
//!
//! Input: byte 0 options, byte 1 start position (see `common.rs`), then the event lines
//! (invalid UTF-8 is replaced, not rejected).

#![no_main]

use libfuzzer_sys::fuzz_target;
use touchmove::events::Event;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let Some((mut engine, rest)) = common::start(data) else { return };
    let text = String::from_utf8_lossy(rest);
    let mut out = Vec::new();
    for (i, line) in text.split('\n').enumerate() {
        // The contract's reader trims lines; also parse the raw line, so `parse` sees
        // surrounding whitespace and `\r` too.
        let _ = Event::parse(line, i + 1);
        let Ok(ev) = Event::parse(line.trim(), i + 1) else { continue };
        // What the engine writes back must be a line of the contract again.
        let back = ev.to_json_line();
        if let Err(e) = Event::parse(&back, i + 1) {
            panic!("to_json_line wrote {back:?} for {line:?}, which does not parse: {e}");
        }
        if common::dump() {
            eprintln!("{back}");
        }
        engine.apply(&ev, &mut out);
    }
    engine.finish(&mut out);
    for record in &out {
        let json = serde_json::to_string(record).expect("a record serialises");
        serde_json::from_str::<serde_json::Value>(&json).expect("a serialised record is JSON");
    }
});
