//! What the pipeline predicted for one clip: the output directory of `touchmove analyse`
//! (`events.jsonl`, `rulings.jsonl`, `track.jsonl`, `summary.json`, and `visits.jsonl` where
//! there is one), loaded with errors that name the file, the line and the field.

use std::path::Path;

use serde_json::Value;
use shakmaty::{Color, Square};
use shakmaty::uci::UciMove;

use super::{Board, FramedEvent, parse_board};
use crate::events::Event;
use crate::rules::{Article, Verdict};

/// A move the pipeline reported (a `move` record).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PredictedMove {
    /// The move.
    pub uci: UciMove,
    /// Who played it.
    pub side: Color,
    /// When it was completed.
    pub t: f64,
    /// When it was made (the hand let go): what `eval` times against the labelled window.
    pub made_t: f64,
}

/// A ruling the pipeline gave (a `ruling` record).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PredictedRuling {
    /// Its verdict.
    pub verdict: Verdict,
    /// The article.
    pub article: Article,
    /// The player in breach.
    pub side: Color,
    /// When.
    pub t: f64,
}

/// One analysed frame of `track.jsonl`.
#[derive(Clone, Debug, PartialEq)]
pub struct TrackFrame {
    /// The frame index.
    pub frame: u64,
    /// Seconds.
    pub t: f64,
    /// The board as read.
    pub board: Board,
    /// Hands over the board.
    pub hands: u32,
}

/// A hand's visit to a piece that stayed, with the probability that it touched it
/// (`visits.jsonl`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PredictedVisit {
    /// The square.
    pub sq: Square,
    /// The first reading a hand was near.
    pub from: f64,
    /// The first still view after.
    pub to: f64,
    /// The probability that the piece was touched.
    pub p: f64,
}

/// The analysis' own account of its work (`summary.json`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    /// Frames decoded.
    pub frames: u64,
    /// Frames run through the model (the rest were skipped by the motion gate).
    pub analysed: u64,
    /// Wall seconds of the analysis.
    pub seconds: f64,
    /// The clip's duration in seconds.
    pub video_seconds: f64,
}

/// Everything the pipeline wrote for one clip.
#[derive(Clone, Debug)]
pub struct Predicted {
    /// Physical events, in time order.
    pub events: Vec<FramedEvent>,
    /// Completed moves, in order.
    pub moves: Vec<PredictedMove>,
    /// Rulings, in order.
    pub rulings: Vec<PredictedRuling>,
    /// Analysed frames, in frame order; a frame that is absent holds the previous one's reading.
    pub track: Vec<TrackFrame>,
    /// The hands' visits measured (none where an older analysis wrote no `visits.jsonl`).
    pub visits: Vec<PredictedVisit>,
    /// Counts and timings.
    pub summary: Summary,
}

impl Predicted {
    /// Loads the four files of `dir`.
    pub fn load(dir: &Path) -> Result<Predicted, String> {
        let (moves, rulings) = rulings(&dir.join("rulings.jsonl"))?;
        Ok(Predicted {
            events: events(&dir.join("events.jsonl"))?,
            moves,
            rulings,
            track: track(&dir.join("track.jsonl"))?,
            visits: visits(&dir.join("visits.jsonl"))?,
            summary: summary(&dir.join("summary.json"))?,
        })
    }
}

/// Calls `f` on each non-blank line of a JSON Lines file with its 1-based number; an error from
/// `f` is prefixed with `file:line: `.
fn lines(path: &Path, mut f: impl FnMut(&str, usize) -> Result<(), String>) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    for (i, line) in text.lines().enumerate() {
        if !line.trim().is_empty() {
            f(line, i + 1).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))?;
        }
    }
    Ok(())
}

fn object(line: &str) -> Result<serde_json::Map<String, Value>, String> {
    serde_json::from_str(line).map_err(|e| format!("field `line`: not a JSON object: {e}"))
}

fn number(o: &serde_json::Map<String, Value>, field: &str) -> Result<f64, String> {
    o.get(field).and_then(Value::as_f64).ok_or_else(|| format!("field `{field}`: missing or not a number"))
}

fn index(o: &serde_json::Map<String, Value>, field: &str) -> Result<u64, String> {
    o.get(field).and_then(Value::as_u64).ok_or_else(|| format!("field `{field}`: missing or not a whole number"))
}

fn string<'a>(o: &'a serde_json::Map<String, Value>, field: &str) -> Result<&'a str, String> {
    o.get(field).and_then(Value::as_str).ok_or_else(|| format!("field `{field}`: missing or not a string"))
}

fn side(o: &serde_json::Map<String, Value>) -> Result<Color, String> {
    match string(o, "side")? {
        "w" => Ok(Color::White),
        "b" => Ok(Color::Black),
        other => Err(format!("field `side`: {other:?} is not `w` or `b`")),
    }
}

fn events(path: &Path) -> Result<Vec<FramedEvent>, String> {
    let mut out: Vec<FramedEvent> = Vec::new();
    lines(path, |line, n| {
        let o = object(line)?;
        let event = Event::from_object(&o, n).map_err(|e| format!("field `{}`: {}", e.field, e.message))?;
        let frame = index(&o, "frame")?;
        if let Some(last) = out.last()
            && (event.t < last.event.t || frame < last.frame)
        {
            return Err(format!("fields `t`, `frame`: {} (frame {frame}) is earlier than the previous event: time must not go backwards", event.t));
        }
        out.push(FramedEvent { frame, event, moved: None });
        Ok(())
    })?;
    Ok(out)
}

fn rulings(path: &Path) -> Result<(Vec<PredictedMove>, Vec<PredictedRuling>), String> {
    let mut moves = Vec::new();
    let mut rulings = Vec::new();
    lines(path, |line, _| {
        let o = object(line)?;
        let t = number(&o, "t")?;
        match string(&o, "kind")? {
            "move" => {
                let text = string(&o, "uci")?;
                let uci = text.parse().map_err(|_| format!("field `uci`: {text:?} is not a UCI move"))?;
                moves.push(PredictedMove { uci, side: side(&o)?, t, made_t: number(&o, "made_t")? });
            }
            "ruling" => {
                let verdict = string(&o, "verdict")?;
                let article = string(&o, "article")?;
                rulings.push(PredictedRuling {
                    verdict: Verdict::parse(verdict).ok_or_else(|| format!("field `verdict`: {verdict:?} is not a verdict"))?,
                    article: Article::parse(article).ok_or_else(|| format!("field `article`: {article:?} is not an article"))?,
                    side: side(&o)?,
                    t,
                });
            }
            "warning" | "claim_closed" => {}
            other => return Err(format!("field `kind`: {other:?} is not move, ruling, warning or claim_closed")),
        }
        Ok(())
    })?;
    Ok((moves, rulings))
}

fn track(path: &Path) -> Result<Vec<TrackFrame>, String> {
    let mut out: Vec<TrackFrame> = Vec::new();
    lines(path, |line, _| {
        let o = object(line)?;
        let frame = index(&o, "frame")?;
        if out.last().is_some_and(|last| frame <= last.frame) {
            return Err(format!("field `frame`: {frame} does not follow the previous line's frame"));
        }
        let hands = index(&o, "hands")?;
        out.push(TrackFrame {
            frame,
            t: number(&o, "t")?,
            board: parse_board(string(&o, "board")?).map_err(|e| format!("field `board`: {e}"))?,
            hands: u32::try_from(hands).map_err(|_| format!("field `hands`: {hands} is not a number of hands"))?,
        });
        Ok(())
    })?;
    Ok(out)
}

fn visits(path: &Path) -> Result<Vec<PredictedVisit>, String> {
    let mut out = Vec::new();
    if !path.exists() {
        return Ok(out);
    }
    lines(path, |line, _| {
        let o = object(line)?;
        let sq = string(&o, "sq")?.parse::<Square>().map_err(|_| "field `sq`: not a square".to_string())?;
        out.push(PredictedVisit { sq, from: number(&o, "from")?, to: number(&o, "to")?, p: number(&o, "p")? });
        Ok(())
    })?;
    Ok(out)
}

fn summary(path: &Path) -> Result<Summary, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let at = |e: String| format!("{}: {e}", path.display());
    let o = object(&text).map_err(at)?;
    let summary = Summary {
        frames: index(&o, "frames").map_err(at)?,
        analysed: index(&o, "analysed").map_err(at)?,
        seconds: number(&o, "seconds").map_err(at)?,
        video_seconds: number(&o, "video_seconds").map_err(at)?,
    };
    if summary.analysed > summary.frames {
        return Err(at(format!("fields `analysed`, `frames`: {} frames analysed out of {} decoded", summary.analysed, summary.frames)));
    }
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scratch folder (removed when dropped) with the four files, `files` in place of the
    /// defaults.
    fn dir_with(name: &str, files: &[(&str, &str)]) -> tempfile::TempDir {
        let scratch = tempfile::Builder::new().prefix(&format!("touchmove-predicted-{name}-")).tempdir().unwrap();
        let dir = scratch.path();
        let defaults = [
            ("events.jsonl", r#"{"t":1.0,"ev":"touch","sq":"g1","hand":"w1","conf":0.9,"frame":20}"#),
            ("rulings.jsonl", r#"{"t":4.4,"kind":"move","ply":1,"side":"w","uci":"f1c4","san":"Bc4","fen":"x","made_t":4.4}"#),
            ("track.jsonl", r#"{"frame":0,"t":0.0,"board":"rnbqkbnrpppppppp................................PPPPPPPPRNBQKBNR","hands":0}"#),
            ("summary.json", r#"{"frames":210,"analysed":120,"seconds":3.5,"video_seconds":10.5}"#),
        ];
        for (file, text) in defaults {
            std::fs::write(dir.join(file), text).unwrap();
        }
        for (file, text) in files {
            std::fs::write(dir.join(file), text).unwrap();
        }
        scratch
    }

    #[test]
    fn loads_the_four_files() {
        let p = Predicted::load(dir_with("ok", &[]).path()).unwrap();
        assert_eq!(p.events[0].frame, 20);
        assert_eq!(p.moves[0].uci.to_string(), "f1c4");
        assert_eq!(p.track[0].hands, 0);
        assert_eq!((p.summary.analysed, p.summary.frames), (120, 210));
    }

    #[test]
    fn errors_name_file_line_and_field() {
        let cases = [
            ("events.jsonl", "\n{\"t\":1.0,\"ev\":\"touch\",\"sq\":\"g1\",\"hand\":\"w1\"}", "events.jsonl:2: field `frame`"),
            ("events.jsonl", r#"{"t":1.0,"ev":"touch","sq":"z9","hand":"w1","frame":3}"#, "events.jsonl:1: field `sq`"),
            (
                "events.jsonl",
                "{\"t\":2.0,\"ev\":\"touch\",\"sq\":\"g1\",\"hand\":\"w1\",\"frame\":40}\n{\"t\":1.0,\"ev\":\"touch\",\"sq\":\"g1\",\"hand\":\"w1\",\"frame\":20}",
                "events.jsonl:2: fields `t`, `frame`",
            ),
            ("rulings.jsonl", r#"{"t":1,"kind":"ruling","verdict":"violation","article":"9.9","side":"w"}"#, "rulings.jsonl:1: field `article`"),
            ("rulings.jsonl", r#"{"t":1,"kind":"verdict"}"#, "rulings.jsonl:1: field `kind`"),
            ("track.jsonl", r#"{"frame":0,"t":0,"board":"rnbq","hands":0}"#, "track.jsonl:1: field `board`"),
            ("summary.json", r#"{"frames":10,"analysed":20,"seconds":1,"video_seconds":1}"#, "summary.json: fields `analysed`"),
        ];
        for (file, text, want) in cases {
            let e = Predicted::load(dir_with("bad", &[(file, text)]).path()).unwrap_err();
            assert!(e.contains(want), "{file} {text}: {e}");
        }
        let scratch = dir_with("missing", &[]);
        std::fs::remove_file(scratch.path().join("track.jsonl")).unwrap();
        assert!(Predicted::load(scratch.path()).unwrap_err().contains("track.jsonl: cannot read"));
    }
}
