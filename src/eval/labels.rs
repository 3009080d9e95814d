//! The truth of a labelled clip (`NAME/labels.json`): the rendered fixtures' full labels
//! (`touchmove-clip-labels/1`) or the partial labels of a real clip
//! (`touchmove-clip-labels/partial-1`), turned into what `eval` expects to see. The format is
//! documented in `fixtures/README.md`.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;
use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Color, Position};

use super::{Board, FramedEvent, parse_board};
use crate::events::{Action, Event};
use crate::rules::{Article, Verdict};

/// The format of the rendered fixtures: every field known, frame by frame.
pub const RENDERED: &str = "touchmove-clip-labels/1";
/// The format of a real clip's labels: the start position and whatever else is known.
pub const PARTIAL: &str = "touchmove-clip-labels/partial-1";

/// Where the pipeline gets the board's position in the image from.
#[derive(Clone, Debug, PartialEq)]
pub enum CalibrationSource {
    /// A calibration file written by `touchmove calibrate`.
    File(PathBuf),
    /// The four outer corners of the playing area in pixels, order a8, h8, h1, a1.
    Corners([[f64; 2]; 4]),
}

/// A move the labels say was played, with the window in which it was made.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ExpectedMove {
    /// The move, castling as the king's move (`e1g1`).
    pub uci: UciMove,
    /// Who played it.
    pub side: Color,
    /// Seconds: the first labelled event of the move (rendered), or the window's start (partial).
    pub from: f64,
    /// Seconds: when the move was completed (rendered: the clock press), or the window's end.
    pub to: f64,
    /// How many hands of the mover took part, where known.
    pub hands: Option<usize>,
}

/// A ruling the labels say is due, with the window in which it is expected.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ExpectedRuling {
    /// Its verdict.
    pub verdict: Verdict,
    /// The article.
    pub article: Article,
    /// The player in breach.
    pub side: Color,
    /// Seconds: the window's start (rendered: the offender's last visible event at or before
    /// the time the labels' engine gave it, since that engine saw the clock and may rule at a
    /// press no camera sees).
    pub from: f64,
    /// Seconds: the window's end (rendered: the time the labels' engine gave it).
    pub to: f64,
}

/// The truth of one frame, where labelled.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameTruth {
    /// The frame index.
    pub frame: u64,
    /// What stands on each square (a piece in a hand stands on none).
    pub pieces: Option<Board>,
    /// How many hands are over the playing area.
    pub hands: Option<u32>,
}

/// Which of the two formats a clip's labels follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `touchmove-clip-labels/1`.
    Rendered,
    /// `touchmove-clip-labels/partial-1`.
    Partial,
}

impl Format {
    /// The format's name as `labels.json` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Rendered => RENDERED,
            Format::Partial => PARTIAL,
        }
    }
}

/// Everything `eval` knows about a labelled clip; each `None` is something not labelled.
#[derive(Clone, Debug)]
pub struct Labels {
    /// The clip's directory's name (`touchmove eval` names a clip by its path under the folder
    /// it was given: `cmd::eval::find_named_clips`).
    pub name: String,
    /// The format of its `labels.json`.
    pub format: Format,
    /// The video.
    pub video: PathBuf,
    /// The board's position in the image, if labelled (otherwise the pipeline finds it).
    pub calibration: Option<CalibrationSource>,
    /// The position the clip starts from.
    pub fen: Fen,
    /// Frames per second, where frames are labelled.
    pub fps: Option<f64>,
    /// The clip's length in seconds, where known.
    pub duration: Option<f64>,
    /// The physical events a tracker should report: the script's, without `press` (the clock is
    /// out of view) and `adjust` (a spoken declaration).
    pub events: Option<Vec<FramedEvent>>,
    /// The spoken declarations ("j'adoube"): the script's `adjust` events, which stand for an
    /// audio channel when the clip is run.
    pub declarations: Vec<Event>,
    /// The moves, in order.
    pub moves: Option<Vec<ExpectedMove>>,
    /// The rulings; `Some(empty)` means none are due, `None` that rulings are not labelled.
    pub rulings: Option<Vec<ExpectedRuling>>,
    /// Per-frame truth.
    pub frames: Option<Vec<FrameTruth>>,
}

#[derive(Deserialize)]
struct RawFrame {
    frame: u64,
    pieces: Option<String>,
    hands_over_board: Option<u32>,
}

#[derive(Deserialize)]
struct RawRendered {
    fen: String,
    fps: f64,
    n_frames: u64,
    corners: [[f64; 2]; 4],
    events: Vec<Value>,
    rules: Option<Vec<Value>>,
    frames: Vec<RawFrame>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMove {
    uci: String,
    from: f64,
    to: f64,
    hands: Option<usize>,
    /// Not a legal move (the piece moved as the board shows it, the other side to move): it is
    /// labelled as a ruling, and the moves after it follow from the board it leaves.
    #[serde(default)]
    illegal: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRuling {
    verdict: String,
    article: String,
    side: String,
    from: f64,
    to: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPartial {
    #[serde(rename = "format")]
    _format: String,
    #[serde(rename = "note")]
    _note: Option<String>,
    fen: String,
    video: Option<String>,
    calibration: Option<String>,
    corners: Option<[[f64; 2]; 4]>,
    fps: Option<f64>,
    duration: Option<f64>,
    moves: Option<Vec<RawMove>>,
    rulings: Option<Vec<RawRuling>>,
    events: Option<Vec<Value>>,
    frames: Option<Vec<RawFrame>>,
}

impl Labels {
    /// Loads `dir/labels.json`. Errors name the file and the field at fault.
    pub fn load(dir: &Path) -> Result<Labels, String> {
        let path = dir.join("labels.json");
        let file = path.display();
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{file}: cannot read: {e}"))?;
        let value: Value = serde_json::from_str(&text).map_err(|e| format!("{file}: not JSON: {e}"))?;
        let name = dir
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| format!("{}: a clip directory needs a UTF-8 name", dir.display()))?
            .to_string();
        let labels = match value.get("format").and_then(Value::as_str) {
            Some(RENDERED) => rendered(dir, name, value),
            Some(PARTIAL) => partial(dir, name, value),
            other => Err(format!("field `format`: {other:?} is neither {RENDERED:?} nor {PARTIAL:?}")),
        };
        labels.map_err(|e| format!("{file}: {e}"))
    }
}

fn rendered(dir: &Path, name: String, value: Value) -> Result<Labels, String> {
    let raw: RawRendered = serde_json::from_value(value).map_err(|e| e.to_string())?;
    let fen = parse_fen(&raw.fen)?;
    check_fps(raw.fps)?;
    let all = parse_events(&raw.events)?;
    let declarations = declarations(&all);
    let events = visible(all);
    let (moves, rulings) = match raw.rules {
        None => (None, None),
        Some(records) => {
            let (moves, rulings) = parse_rules(&records, &events)?;
            (Some(moves), Some(rulings))
        }
    };
    Ok(Labels {
        name,
        format: Format::Rendered,
        video: dir.join("clip.mp4"),
        calibration: Some(CalibrationSource::Corners(raw.corners)),
        fen,
        fps: Some(raw.fps),
        duration: Some(raw.n_frames as f64 / raw.fps),
        events: Some(events),
        declarations,
        moves,
        rulings,
        frames: Some(parse_frames(raw.frames)?),
    })
}

fn partial(dir: &Path, name: String, value: Value) -> Result<Labels, String> {
    let raw: RawPartial = serde_json::from_value(value).map_err(|e| e.to_string())?;
    let fen = parse_fen(&raw.fen)?;
    if let Some(fps) = raw.fps {
        check_fps(fps)?;
    } else if raw.events.is_some() || raw.frames.is_some() {
        return Err("field `fps`: missing: labelled events and frames need it".into());
    }
    let calibration = match (raw.calibration, raw.corners) {
        (Some(_), Some(_)) => return Err("fields `calibration` and `corners`: give one, not both".into()),
        (Some(file), None) => Some(CalibrationSource::File(dir.join(file))),
        (None, Some(corners)) => Some(CalibrationSource::Corners(corners)),
        (None, None) => None,
    };
    let moves = raw.moves.map(|m| parse_moves(&fen, m)).transpose()?;
    let rulings = raw
        .rulings
        .map(|rs| rs.into_iter().enumerate().map(|(i, r)| parse_ruling(i, r)).collect::<Result<Vec<_>, _>>())
        .transpose()?;
    let all = raw.events.map(|e| parse_events(&e)).transpose()?;
    let declarations = all.as_deref().map(declarations).unwrap_or_default();
    Ok(Labels {
        name,
        format: Format::Partial,
        video: dir.join(raw.video.as_deref().unwrap_or("clip.mp4")),
        calibration,
        fen,
        fps: raw.fps,
        duration: raw.duration,
        events: all.map(visible),
        declarations,
        moves,
        rulings,
        frames: raw.frames.map(parse_frames).transpose()?,
    })
}

fn parse_fen(text: &str) -> Result<Fen, String> {
    let fen: Fen = text.parse().map_err(|e| format!("field `fen`: {text:?}: {e}"))?;
    fen.clone().into_position::<Chess>(CastlingMode::Standard).map_err(|e| format!("field `fen`: {text:?}: {e}"))?;
    Ok(fen)
}

fn check_fps(fps: f64) -> Result<(), String> {
    if fps.is_finite() && fps > 0.0 { Ok(()) } else { Err(format!("field `fps`: {fps} is not a frame rate")) }
}

fn parse_side(text: &str) -> Option<Color> {
    match text {
        "w" => Some(Color::White),
        "b" => Some(Color::Black),
        _ => None,
    }
}

/// Parses labelled events: the event contract plus an integer `frame`.
fn parse_events(values: &[Value]) -> Result<Vec<FramedEvent>, String> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let event = Event::parse(&v.to_string(), i + 1).map_err(|e| format!("events[{i}]: field `{}`: {}", e.field, e.message))?;
            let frame = v
                .get("frame")
                .and_then(Value::as_u64)
                .ok_or_else(|| format!("events[{i}]: field `frame`: missing or not a frame index"))?;
            let moved = v.get("displacement").map(|d| {
                let shifted = d.get("mm").and_then(Value::as_array).is_some_and(|mm| mm.iter().any(|x| x.as_f64().is_some_and(|x| x != 0.0)));
                shifted || d.get("deg").and_then(Value::as_f64).is_some_and(|x| x != 0.0)
            });
            Ok(FramedEvent { frame, event, moved })
        })
        .collect()
}

/// Whether `eval` scores events of this kind: all that a camera over the board can see, so not
/// clock presses (the clock is out of view) nor declarations (spoken).
pub fn is_scored(action: &Action) -> bool {
    !matches!(action, Action::Press | Action::Adjust)
}

fn declarations(events: &[FramedEvent]) -> Vec<Event> {
    events.iter().filter(|e| e.event.action == Action::Adjust).map(|e| e.event).collect()
}

fn visible(events: Vec<FramedEvent>) -> Vec<FramedEvent> {
    events.into_iter().filter(|e| is_scored(&e.event.action)).collect()
}

/// The moves and rulings of the `rules` records; each move's window starts at the first event
/// of its side after the previous move was completed, and counts that side's hands in it.
fn parse_rules(records: &[Value], events: &[FramedEvent]) -> Result<(Vec<ExpectedMove>, Vec<ExpectedRuling>), String> {
    let mut moves = Vec::new();
    let mut rulings = Vec::new();
    let mut previous = f64::NEG_INFINITY;
    for (i, r) in records.iter().enumerate() {
        let field = |name: &str| -> Result<&Value, String> { r.get(name).ok_or_else(|| format!("rules[{i}]: field `{name}`: missing")) };
        let string = |name: &str| -> Result<&str, String> {
            field(name)?.as_str().ok_or_else(|| format!("rules[{i}]: field `{name}`: not a string"))
        };
        let t = field("t")?.as_f64().ok_or_else(|| format!("rules[{i}]: field `t`: not a number"))?;
        let side = || parse_side(string("side")?).ok_or_else(|| format!("rules[{i}]: field `side`: not `w` or `b`"));
        match string("kind")? {
            "move" => {
                let text = string("uci")?;
                let uci: UciMove = text.parse().map_err(|_| format!("rules[{i}]: field `uci`: {text:?} is not a UCI move"))?;
                let side = side()?;
                let own: Vec<&FramedEvent> =
                    events.iter().filter(|e| e.event.hand.side == side && e.event.t > previous && e.event.t <= t).collect();
                let from = own.first().map_or(previous.max(0.0), |e| e.event.t);
                let mut hands: Vec<_> = own.iter().map(|e| e.event.hand).collect();
                hands.sort_by_key(|h| h.number);
                hands.dedup();
                moves.push(ExpectedMove { uci, side, from, to: t, hands: Some(hands.len()) });
                previous = t;
            }
            "ruling" => {
                let verdict = string("verdict")?;
                let article = string("article")?;
                let side = side()?;
                // The labels' engine saw the clock and may rule at the press; a camera that
                // cannot see the clock rules at the offender's last act it can see.
                let from = events.iter().rev().find(|e| e.event.hand.side == side && e.event.t <= t).map_or(t, |e| e.event.t);
                rulings.push(ExpectedRuling {
                    verdict: Verdict::parse(verdict).ok_or_else(|| format!("rules[{i}]: field `verdict`: {verdict:?} is not a verdict"))?,
                    article: Article::parse(article).ok_or_else(|| format!("rules[{i}]: field `article`: {article:?} is not an article"))?,
                    side,
                    from,
                    to: t,
                });
            }
            _ => {}
        }
    }
    Ok((moves, rulings))
}

/// The position after the illegal move `uci` in `pos`: its piece where it was set (a castling
/// king with its rook), the other side to move.
fn illegal_after(pos: &Chess, uci: &UciMove) -> Option<Chess> {
    let UciMove::Normal { from, to, .. } = *uci else { return None };
    let board = pos.board();
    let castles = board.role_at(from) == Some(shakmaty::Role::King) && from.distance(to) == 2 && from.rank() == to.rank();
    let tr = if castles {
        let rook = shakmaty::Square::from_coords(if to > from { shakmaty::File::H } else { shakmaty::File::A }, from.rank());
        crate::read::hypothesis::Transition::illegal_castle(pos, from, rook)
    } else {
        crate::read::hypothesis::Transition::illegal(pos, from, to)
    };
    tr.map(|tr| tr.after)
}

/// Replays the labelled moves from the start position: each must be legal (or labelled
/// illegal), and gives its side.
fn parse_moves(fen: &Fen, raw: Vec<RawMove>) -> Result<Vec<ExpectedMove>, String> {
    let mut pos: Chess = fen.clone().into_position(CastlingMode::Standard).map_err(|e| format!("field `fen`: {e}"))?;
    let mut moves = Vec::new();
    for (i, m) in raw.into_iter().enumerate() {
        let uci: UciMove = m.uci.parse().map_err(|_| format!("moves[{i}]: field `uci`: {:?} is not a UCI move", m.uci))?;
        check_window(&format!("moves[{i}]"), m.from, m.to)?;
        if m.illegal {
            pos = illegal_after(&pos, &uci).ok_or_else(|| format!("moves[{i}]: field `uci`: {} moves no piece of the side to move", m.uci))?;
            continue;
        }
        let legal = uci.to_move(&pos).map_err(|_| format!("moves[{i}]: field `uci`: {} is not legal in {}", m.uci, shakmaty::fen::Fen::from_position(&pos, shakmaty::EnPassantMode::Legal)))?;
        moves.push(ExpectedMove { uci, side: pos.turn(), from: m.from, to: m.to, hands: m.hands });
        pos.play_unchecked(legal);
    }
    Ok(moves)
}

fn parse_ruling(i: usize, r: RawRuling) -> Result<ExpectedRuling, String> {
    check_window(&format!("rulings[{i}]"), r.from, r.to)?;
    Ok(ExpectedRuling {
        verdict: Verdict::parse(&r.verdict).ok_or_else(|| format!("rulings[{i}]: field `verdict`: {:?} is not a verdict", r.verdict))?,
        article: Article::parse(&r.article).ok_or_else(|| format!("rulings[{i}]: field `article`: {:?} is not an article", r.article))?,
        side: parse_side(&r.side).ok_or_else(|| format!("rulings[{i}]: field `side`: {:?} is not `w` or `b`", r.side))?,
        from: r.from,
        to: r.to,
    })
}

fn check_window(at: &str, from: f64, to: f64) -> Result<(), String> {
    if from.is_finite() && to.is_finite() && 0.0 <= from && from <= to {
        Ok(())
    } else {
        Err(format!("{at}: fields `from`, `to`: {from}..{to} is not a window in seconds"))
    }
}

fn parse_frames(raw: Vec<RawFrame>) -> Result<Vec<FrameTruth>, String> {
    raw.into_iter()
        .enumerate()
        .map(|(i, f)| {
            let pieces = f.pieces.as_deref().map(parse_board).transpose().map_err(|e| format!("frames[{i}]: field `pieces`: {e}"))?;
            Ok(FrameTruth { frame: f.frame, pieces, hands: f.hands_over_board })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, text: &str) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("labels.json"), text).unwrap();
    }

    /// A scratch folder, removed when dropped.
    fn tmp(name: &str) -> tempfile::TempDir {
        tempfile::Builder::new().prefix(&format!("touchmove-labels-{name}-")).tempdir().unwrap()
    }

    #[test]
    fn rendered_labels_give_windows_hands_and_visible_events() {
        let dir = Path::new("fixtures/clips/two-hands-castling");
        let labels = Labels::load(dir).unwrap();
        assert_eq!(labels.format, Format::Rendered);
        assert_eq!(labels.name, "two-hands-castling");
        let events = labels.events.as_ref().unwrap();
        assert!(events.iter().all(|e| e.event.action != Action::Press));
        let moves = labels.moves.as_ref().unwrap();
        assert_eq!(moves.len(), 1);
        assert_eq!(moves[0].uci.to_string(), "e1g1");
        assert_eq!(moves[0].hands, Some(2));
        assert_eq!(moves[0].from, events[0].event.t);
        let rulings = labels.rulings.as_ref().unwrap();
        assert_eq!((rulings[0].article, rulings[0].verdict), (Article::A7_5_4, Verdict::Illegal));
        // Ruled at the clock press (4.2 s), which no camera sees: from the rook's release.
        assert_eq!((rulings[0].from, rulings[0].to), (3.4, 4.2));
        assert_eq!(labels.frames.as_ref().unwrap().len() as f64, labels.duration.unwrap() * 20.0);
    }

    #[test]
    fn partial_labels_replay_the_moves_and_keep_unlabelled_parts_absent() {
        let scratch = tmp("partial");
        let dir = scratch.path().to_path_buf();
        write(
            &dir,
            r#"{"format":"touchmove-clip-labels/partial-1","fen":"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                "video":"game.mp4","calibration":"board.json",
                "moves":[{"uci":"e2e4","from":1.0,"to":2.5},{"uci":"e7e5","from":3.0,"to":4.0,"hands":1}]}"#,
        );
        let labels = Labels::load(&dir).unwrap();
        assert_eq!(labels.format, Format::Partial);
        assert_eq!(labels.video, dir.join("game.mp4"));
        assert_eq!(labels.calibration, Some(CalibrationSource::File(dir.join("board.json"))));
        let moves = labels.moves.unwrap();
        assert_eq!((moves[0].side, moves[1].side), (Color::White, Color::Black));
        assert_eq!((moves[0].hands, moves[1].hands), (None, Some(1)));
        assert!(labels.events.is_none() && labels.rulings.is_none() && labels.frames.is_none());
    }

    #[test]
    fn bad_labels_name_the_file_and_field() {
        let scratch = tmp("bad");
        let dir = scratch.path().to_path_buf();
        let cases = [
            (r#"{"format":"touchmove-clip-labels/partial-1","fen":"8/8/8/8/8/8/8/8 w - - 0 1"}"#, "field `fen`"),
            (
                r#"{"format":"touchmove-clip-labels/partial-1","fen":"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1","moves":[{"uci":"e2e5","from":1,"to":2}]}"#,
                "moves[0]: field `uci`",
            ),
            (
                r#"{"format":"touchmove-clip-labels/partial-1","fen":"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1","moves":[{"uci":"e2e4","from":3,"to":2}]}"#,
                "moves[0]: fields `from`, `to`",
            ),
            (
                r#"{"format":"touchmove-clip-labels/partial-1","fen":"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1","rulings":[{"verdict":"violation","article":"4.9","side":"w","from":1,"to":2}]}"#,
                "rulings[0]: field `article`",
            ),
            (
                r#"{"format":"touchmove-clip-labels/partial-1","fen":"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1","fps":20,"events":[{"t":1,"ev":"touch","sq":"e2","hand":"w1"}]}"#,
                "events[0]: field `frame`",
            ),
            (r#"{"format":"touchmove-clip-labels/9","fen":""}"#, "field `format`"),
        ];
        for (text, want) in cases {
            write(&dir, text);
            let e = Labels::load(&dir).unwrap_err();
            assert!(e.contains("labels.json") && e.contains(want), "{text}: {e}");
        }
    }
}
