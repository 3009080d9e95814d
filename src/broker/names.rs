//! The names everything on the broker goes by: the subject of each record a board publishes
//! (`touchmove.<round>.<board>.<kind>`), the id the server deduplicates it on, and the keys of
//! the buckets. A round or board named with characters a subject cannot hold (`.`, `*`, `>`,
//! spaces, anything but letters, digits, `-` and `_`) has them written `=XX` (hex of each byte),
//! so `5.1` is `5=2E1` and two names never share a token.

/// The subjects of every board's records.
pub const EVENTS_PREFIX: &str = "touchmove";

/// `text` as one subject token (and one key token): letters, digits, `-` and `_` kept, every
/// other byte `=XX`; the empty name is `=`.
pub fn token(text: &str) -> String {
    if text.is_empty() {
        return "=".into();
    }
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b == b'-' || b == b'_' {
            out.push(b as char);
        } else {
            out.push_str(&format!("={b:02X}"));
        }
    }
    out
}

/// The name a [`token`] was made from, or `None` where it is not one.
pub fn untoken(token: &str) -> Option<String> {
    if token == "=" {
        return Some(String::new());
    }
    let bytes = token.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'=' {
            let hex = token.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The subject of a record of `kind` (`move`, `ruling`, `health`, ...) from `board` in `round`.
pub fn subject(round: &str, board: &str, kind: &str) -> String {
    format!("{EVENTS_PREFIX}.{}.{}.{}", token(round), token(board), token(kind))
}

/// Every subject of `round`, for its consumer.
pub fn round_filter(round: &str) -> String {
    format!("{EVENTS_PREFIX}.{}.>", token(round))
}

/// The round, board and kind a subject names, or `None` where it is not a record's subject.
pub fn parse_subject(subject: &str) -> Option<(String, String, String)> {
    let mut parts = subject.split('.');
    if parts.next()? != EVENTS_PREFIX {
        return None;
    }
    let (round, board, kind) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    Some((untoken(round)?, untoken(board)?, untoken(kind)?))
}

/// The id the server deduplicates the `seq`th record of a board's `run` on: unique over rounds,
/// boards and runs (a board started again is a new run), the same however often it is sent.
pub fn message_id(round: &str, board: &str, run: &str, seq: u64) -> String {
    format!("{}.{}.{run}.{seq}", token(round), token(board))
}

/// The key of `board`'s claim in `round` (bucket [`super::CLAIMS`]).
pub fn claim_key(round: &str, board: &str) -> String {
    format!("{}.{}", token(round), token(board))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects_hold_any_name_and_give_it_back() {
        assert_eq!(subject("5", "12", "move"), "touchmove.5.12.move");
        assert_eq!(subject("5.1", "board 3", "claim_closed"), "touchmove.5=2E1.board=203.claim_closed");
        assert_eq!(subject("?", "", "ruling"), "touchmove.=3F.=.ruling");
        assert_eq!(round_filter("5.1"), "touchmove.5=2E1.>");
        for (round, board, kind) in [("5", "12", "move"), ("5.1", "a*b>c", "health"), ("Ronde 3 ½", "", "decision"), ("=", "==", "x")] {
            let s = subject(round, board, kind);
            assert_eq!(s.split('.').count(), 4, "{s}");
            assert!(!s.contains([' ', '*', '>']), "{s}");
            assert_eq!(parse_subject(&s), Some((round.to_string(), board.to_string(), kind.to_string())), "{s}");
        }
        // Two names never share a token.
        assert_ne!(token("5.1"), token("5_1"));
        assert_ne!(token("a=2E"), token("a."));
        for bad in ["other.5.1.move", "touchmove.5.1", "touchmove.5.1.move.x", "touchmove.=Z.1.move", "touchmove.=4.1.move"] {
            assert_eq!(parse_subject(bad), None, "{bad}");
        }
    }

    #[test]
    fn message_ids_differ_by_board_run_and_record_and_repeat_for_a_resend() {
        let id = message_id("5", "12", "a1b2c3d4", 7);
        assert_eq!(id, "5.12.a1b2c3d4.7");
        assert_eq!(id, message_id("5", "12", "a1b2c3d4", 7), "a record sent again has its id again");
        let others = [message_id("5", "12", "a1b2c3d4", 8), message_id("5", "13", "a1b2c3d4", 7), message_id("6", "12", "a1b2c3d4", 7), message_id("5", "12", "ffff0000", 7), message_id("5.1", "2", "r", 7), message_id("5", "1.2", "r", 7)];
        for (i, a) in others.iter().enumerate() {
            assert_ne!(a, &id);
            for b in &others[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert_eq!(claim_key("5.1", "12"), "5=2E1.12");
    }
}
