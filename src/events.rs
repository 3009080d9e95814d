//! The event contract: physical events at the board, one JSON object per line, as the tracker
//! writes them and the rule engine reads them (`docs/events.md` is the prose version).

use std::fmt;
use std::io::BufRead;

use serde::Serialize;
use shakmaty::{Color, Piece, Square};

/// A hand at the board: the side it belongs to and its number within that side.
///
/// Two different numbers of one side inside one move are two hands (Articles 4.1 and 7.5.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Hand {
    /// The player the hand belongs to.
    pub side: Color,
    /// Which of that player's hands, as the tracker numbers them (`w1`, `w2`).
    pub number: u8,
}

impl fmt::Display for Hand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.side.char(), self.number)
    }
}

impl std::str::FromStr for Hand {
    type Err = String;

    fn from_str(s: &str) -> Result<Hand, String> {
        let mut chars = s.chars();
        let side = match chars.next() {
            Some('w') => Color::White,
            Some('b') => Color::Black,
            _ => return Err(format!("{s:?} is not a hand: expected `w` or `b` then a number, e.g. \"w1\"")),
        };
        let number = chars
            .as_str()
            .parse::<u8>()
            .map_err(|_| format!("{s:?} is not a hand: expected `w` or `b` then a number, e.g. \"w1\""))?;
        Ok(Hand { side, number })
    }
}

/// What happened, with the square or piece each kind needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// A hand deliberately contacts the piece on the square without lifting it.
    Touch(Square),
    /// Clearly accidental contact with the piece on the square: no grasp, no displacement.
    Brush(Square),
    /// The piece on the square leaves the board in the hand.
    Lift(Square),
    /// The held piece touches the square or the piece standing there, without being let go;
    /// with `piece`, an off-board piece touches the square (as in promotion).
    Contact {
        /// The square touched.
        sq: Square,
        /// The off-board piece that touched it, if it is not a held board piece.
        piece: Option<Piece>,
    },
    /// The hand lets go of the held piece, standing on the square.
    Release(Square),
    /// The piece on the square is taken off the board; `None`: the held piece is put aside.
    Remove(Option<Square>),
    /// An off-board piece is put on the square and let go.
    Place {
        /// Where it was put.
        sq: Square,
        /// Which piece.
        piece: Piece,
    },
    /// The piece on the square is displaced or toppled.
    Knock(Square),
    /// The player declares the intention to adjust ("j'adoube").
    Adjust,
    /// The player presses the clock.
    Press,
}

impl Action {
    /// The contract's name for this kind of event (`"touch"`, `"lift"`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            Action::Touch(_) => "touch",
            Action::Brush(_) => "brush",
            Action::Lift(_) => "lift",
            Action::Contact { .. } => "contact",
            Action::Release(_) => "release",
            Action::Remove(_) => "remove",
            Action::Place { .. } => "place",
            Action::Knock(_) => "knock",
            Action::Adjust => "adjust",
            Action::Press => "press",
        }
    }

    /// The square the event names, if any.
    pub fn square(&self) -> Option<Square> {
        match *self {
            Action::Touch(sq)
            | Action::Brush(sq)
            | Action::Lift(sq)
            | Action::Release(sq)
            | Action::Knock(sq)
            | Action::Contact { sq, .. }
            | Action::Place { sq, .. } => Some(sq),
            Action::Remove(sq) => sq,
            Action::Adjust | Action::Press => None,
        }
    }

    /// The off-board piece the event names, if any.
    pub fn piece(&self) -> Option<Piece> {
        match *self {
            Action::Contact { piece, .. } => piece,
            Action::Place { piece, .. } => Some(piece),
            _ => None,
        }
    }
}

/// One physical event at the board.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Event {
    /// Seconds since the start of the clip; equal times mean the order is unknown.
    pub t: f64,
    /// What happened.
    pub action: Action,
    /// The hand that did it (for `adjust` and `press`: the player of that hand).
    pub hand: Hand,
    /// The tracker's confidence in the event, 0 to 1, where it gave one.
    pub conf: Option<f32>,
    /// The tracker's confidence, 0 to 1, that `hand` is this hand and not its player's other
    /// one (two hands in one move, 4.1), where it doubts it; none: sure.
    pub hand_conf: Option<f32>,
}

/// A line of input that does not follow the contract.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("line {line}, field `{field}`: {message}")]
pub struct ParseError {
    /// 1-based line number in the input.
    pub line: usize,
    /// The JSON field at fault (`line` when the line itself is not a JSON object).
    pub field: &'static str,
    /// What is wrong, in plain words.
    pub message: String,
}

/// The wire form of an event: field names and spellings exactly as in the contract.
#[derive(Serialize)]
struct Wire<'a> {
    t: f64,
    ev: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    sq: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    piece: Option<&'a str>,
    hand: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    conf: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hand_conf: Option<f64>,
}

impl Event {
    /// Parses one line of the contract. `line` is only used to name the line in errors.
    pub fn parse(text: &str, line: usize) -> Result<Event, ParseError> {
        let object: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(text).map_err(|e| ParseError { line, field: "line", message: format!("not a JSON object: {e}") })?;
        Event::from_object(&object, line)
    }

    /// Reads an event from a line of the contract already parsed as a JSON object (fields it
    /// does not know, such as the pipeline's `frame`, are left to the caller).
    pub fn from_object(object: &serde_json::Map<String, serde_json::Value>, line: usize) -> Result<Event, ParseError> {
        let err = |field: &'static str, message: String| ParseError { line, field, message };
        let string = |field: &'static str| -> Result<Option<&str>, ParseError> {
            match object.get(field) {
                None | Some(serde_json::Value::Null) => Ok(None),
                Some(serde_json::Value::String(s)) => Ok(Some(s)),
                Some(other) => Err(err(field, format!("{other} is not a string"))),
            }
        };
        let number = |field: &'static str| -> Result<Option<f64>, ParseError> {
            match object.get(field) {
                None | Some(serde_json::Value::Null) => Ok(None),
                Some(serde_json::Value::Number(n)) => Ok(n.as_f64()),
                Some(other) => Err(err(field, format!("{other} is not a number"))),
            }
        };
        let wire = Wire {
            t: number("t")?.ok_or_else(|| err("t", "missing: every event has a time in seconds".into()))?,
            ev: string("ev")?.ok_or_else(|| err("ev", "missing: every event has a kind".into()))?,
            sq: string("sq")?,
            piece: string("piece")?,
            hand: string("hand")?,
            conf: number("conf")?,
            hand_conf: number("hand_conf")?,
        };
        if !wire.t.is_finite() || wire.t < 0.0 {
            return Err(err("t", format!("{} is not a time in seconds (finite, not negative)", wire.t)));
        }
        let hand = wire.hand.ok_or_else(|| err("hand", "missing: every event names a hand, e.g. \"w1\"".into()))?;
        let hand: Hand = hand.parse().map_err(|m| err("hand", m))?;
        let fraction = |field: &'static str, value: Option<f64>| match value {
            Some(c) if (0.0..=1.0).contains(&c) => Ok(Some(c as f32)),
            Some(c) => Err(err(field, format!("{c} is outside 0..1"))),
            None => Ok(None),
        };
        let conf = fraction("conf", wire.conf)?;
        let hand_conf = fraction("hand_conf", wire.hand_conf)?;
        let square = |needed: bool| -> Result<Option<Square>, ParseError> {
            match wire.sq {
                Some(s) => s
                    .parse::<Square>()
                    .map(Some)
                    .map_err(|_| err("sq", format!("{s:?} is not a square (a1..h8)"))),
                None if needed => Err(err("sq", format!("missing: `{}` needs a square", wire.ev))),
                None => Ok(None),
            }
        };
        let piece = |needed: bool| -> Result<Option<Piece>, ParseError> {
            match wire.piece {
                Some(p) => {
                    let mut chars = p.chars();
                    match (chars.next(), chars.next()) {
                        (Some(c), None) => Piece::from_char(c)
                            .map(Some)
                            .ok_or_else(|| err("piece", format!("{p:?} is not a FEN piece letter (PNBRQK or pnbrqk)"))),
                        _ => Err(err("piece", format!("{p:?} is not a FEN piece letter (PNBRQK or pnbrqk)"))),
                    }
                }
                None if needed => Err(err("piece", format!("missing: `{}` needs a piece", wire.ev))),
                None => Ok(None),
            }
        };
        let sq = || square(true).map(|s| s.expect("square(true) returns a square"));
        let action = match wire.ev {
            "touch" => Action::Touch(sq()?),
            "brush" => Action::Brush(sq()?),
            "lift" => Action::Lift(sq()?),
            "contact" => Action::Contact { sq: sq()?, piece: piece(false)? },
            "release" => Action::Release(sq()?),
            "remove" => Action::Remove(square(false)?),
            "place" => Action::Place { sq: sq()?, piece: piece(true)?.expect("piece(true) returns a piece") },
            "knock" => Action::Knock(sq()?),
            "adjust" => Action::Adjust,
            "press" => Action::Press,
            other => {
                return Err(err(
                    "ev",
                    format!(
                        "{other:?} is not an event kind (touch, brush, lift, contact, release, remove, place, knock, adjust, press)"
                    ),
                ));
            }
        };
        Ok(Event { t: wire.t, action, hand, conf, hand_conf })
    }

    /// Writes the event as one line of the contract (no trailing newline).
    pub fn to_json_line(&self) -> String {
        let sq = self.action.square().map(|s| s.to_string());
        let piece = self.action.piece().map(|p| p.char().to_string());
        let hand = self.hand.to_string();
        let wire = Wire {
            t: self.t,
            ev: self.action.name(),
            sq: sq.as_deref(),
            piece: piece.as_deref(),
            hand: Some(&hand),
            conf: self.conf.map(|c| (f64::from(c) * 1000.0).round() / 1000.0),
            hand_conf: self.hand_conf.map(|c| (f64::from(c) * 1000.0).round() / 1000.0),
        };
        serde_json::to_string(&wire).expect("an event always serialises")
    }
}

/// Reads events from JSON Lines, checking that time never goes backwards.
///
/// Blank lines are skipped. Each item is one event or the error of one line; after an error the
/// caller decides whether to stop (the `rules` command does).
pub struct Reader<R> {
    input: R,
    line: usize,
    last_t: f64,
    buf: String,
}

impl<R: BufRead> Reader<R> {
    /// Reads from `input`.
    pub fn new(input: R) -> Reader<R> {
        Reader { input, line: 0, last_t: 0.0, buf: String::new() }
    }
}

/// A failure while reading events: the input itself, or a line of it.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The input could not be read.
    #[error("line {line}: cannot read: {source}")]
    Io {
        /// The line being read.
        line: usize,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A line breaks the contract.
    #[error(transparent)]
    Parse(#[from] ParseError),
}

impl<R: BufRead> Iterator for Reader<R> {
    type Item = Result<Event, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            self.buf.clear();
            self.line += 1;
            match self.input.read_line(&mut self.buf) {
                Ok(0) => return None,
                Ok(_) => {}
                Err(source) => return Some(Err(ReadError::Io { line: self.line, source })),
            }
            let text = self.buf.trim();
            if text.is_empty() {
                continue;
            }
            let event = match Event::parse(text, self.line) {
                Ok(event) => event,
                Err(e) => return Some(Err(e.into())),
            };
            if event.t < self.last_t {
                return Some(Err(ParseError {
                    line: self.line,
                    field: "t",
                    message: format!("{} is earlier than the previous event's {}: time must not go backwards", event.t, self.last_t),
                }
                .into()));
            }
            self.last_t = event.t;
            return Some(Ok(event));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_kind() {
        let lines = [
            r#"{"t":1.5,"ev":"touch","sq":"g1","hand":"w1"}"#,
            r#"{"t":2.0,"ev":"brush","sq":"d2","hand":"w2","conf":0.4}"#,
            r#"{"t":3.0,"ev":"contact","sq":"e8","piece":"Q","hand":"w1"}"#,
            r#"{"t":4.0,"ev":"remove","hand":"b1"}"#,
            r#"{"t":4.5,"ev":"lift","sq":"c4","hand":"w2","conf":0.95,"hand_conf":0.6}"#,
            r#"{"t":5.0,"ev":"place","sq":"e1","piece":"q","hand":"b1"}"#,
            r#"{"t":6.0,"ev":"press","hand":"b2"}"#,
        ];
        for (i, line) in lines.iter().enumerate() {
            let ev = Event::parse(line, i + 1).unwrap();
            assert_eq!(Event::parse(&ev.to_json_line(), 1).unwrap(), ev);
        }
    }

    #[test]
    fn errors_name_the_field() {
        let cases = [
            (r#"{"t":1,"ev":"touch","sq":"z9","hand":"w1"}"#, "sq"),
            (r#"{"t":1,"ev":"touch","hand":"w1"}"#, "sq"),
            (r#"{"t":1,"ev":"grab","sq":"e2","hand":"w1"}"#, "ev"),
            (r#"{"t":1,"ev":"touch","sq":"e2","hand":"x1"}"#, "hand"),
            (r#"{"t":1,"ev":"touch","sq":"e2"}"#, "hand"),
            (r#"{"t":1,"ev":"place","sq":"e8","piece":"X","hand":"w1"}"#, "piece"),
            (r#"{"t":-1,"ev":"press","hand":"w1"}"#, "t"),
            (r#"{"t":"soon","ev":"press","hand":"w1"}"#, "t"),
            (r#"{"t":1,"ev":"press","hand":"w1","conf":2}"#, "conf"),
            (r#"{"t":1,"ev":"press","hand":"w1","hand_conf":-0.5}"#, "hand_conf"),
            (r#"not json"#, "line"),
        ];
        for (text, field) in cases {
            let e = Event::parse(text, 7).unwrap_err();
            assert_eq!((e.line, e.field), (7, field), "{text}: {e}");
        }
    }

    #[test]
    fn reader_rejects_time_going_backwards_and_skips_blank_lines() {
        let input = "{\"t\":2,\"ev\":\"press\",\"hand\":\"w1\"}\n\n{\"t\":1,\"ev\":\"press\",\"hand\":\"b1\"}\n";
        let mut reader = Reader::new(input.as_bytes());
        assert!(reader.next().unwrap().is_ok());
        match reader.next().unwrap() {
            Err(ReadError::Parse(e)) => assert_eq!((e.line, e.field), (3, "t")),
            other => panic!("expected a time error, got {other:?}"),
        }
    }
}
