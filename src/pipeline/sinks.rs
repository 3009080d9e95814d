//! The pipeline's outputs, each written as it happens so a crash or Ctrl-C loses nothing
//! already decided: `events.jsonl`, `rulings.jsonl`, `track.jsonl` and `visits.jsonl` (the
//! hands' visits to pieces, measured: see `track::displace`), line-buffered and flushed every
//! frame; `game.pgn` (rewritten atomically after every move, and as soon as a move stands on
//! the board, before it is completed), `evidence/` (a JPEG of the board at each ruling
//! with the squares it rests on marked), `annotated.mp4` with `--overlay`, and `summary.json` at
//! the end. With `echo` (live), moves and rulings also go to stdout; with `--serve`, the game,
//! moves, rulings and warnings go on the air ([`OnAir`]) once written.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use opencv::core::{Mat, Point, Rect, Scalar, Vector};
use opencv::prelude::*;
use opencv::{imgcodecs, imgproc, videoio};
use serde_json::json;
use shakmaty::Position as _;

use super::overlay::Overlay;
use super::EVIDENCE_FPS;
use super::{Config, Outcome, PipelineError, Summary};
use crate::board::Layout;
use crate::detect::fen_square;
use crate::pgn::{Game, GameFile};
use crate::rules::Record;
use crate::serve::{OnAir, unix_seconds};

/// Seconds of warped frames kept to illustrate rulings.
const EVIDENCE_WINDOW_S: f64 = 20.0;

/// A ruling's clip shows this many seconds either side of each moment of its evidence (up to
/// three, as its image), so two moments make about 4 s.
const CLIP_AROUND_S: f64 = 1.0;

/// In a ruling's clip, an event's square is named while the frame is this close to it, in
/// seconds; the squares stay marked throughout.
const CLIP_NAMED_S: f64 = 0.3;

/// Where the run stands, for a progress bar.
#[derive(Clone, Debug)]
pub struct Progress {
    /// Frames through the pipeline.
    pub frames: u64,
    /// Media time reached, seconds.
    pub t: f64,
    /// Moves so far.
    pub moves: u64,
    /// Moves the PGN shows: those completed and the one standing on the board (what a
    /// broadcast shows).
    pub plies: usize,
    /// Rulings so far.
    pub rulings: u64,
    /// Frames dropped (live).
    pub dropped: u64,
    /// The last ruling's sentence, if one was just given.
    pub ruling: Option<String>,
}

pub(super) struct Sinks {
    out: PathBuf,
    echo: bool,
    events: BufWriter<File>,
    rulings: BufWriter<File>,
    track: BufWriter<File>,
    visits: BufWriter<File>,
    game: Arc<GameFile>,
    on_air: Option<Arc<OnAir>>,
    /// The warp's layout, read from the first frame's size.
    layout: Layout,
    recent: VecDeque<(f64, Mat)>,
    /// `annotated.mp4`, opened at the first frame (its size is the warp's); `None` inside when
    /// not asked for.
    overlay: Option<Option<Overlay>>,
    last_ruling: Option<String>,
}

fn output_error(path: &Path, e: impl std::fmt::Display) -> PipelineError {
    PipelineError::Output { path: path.to_owned(), message: e.to_string() }
}

/// The event that tells `/events` clients the position the game starts from.
fn start_event(start: &shakmaty::Chess) -> serde_json::Value {
    json!({"kind": "start", "t": 0.0, "fen": shakmaty::fen::Fen::from_position(start, shakmaty::EnPassantMode::Legal).to_string()})
}

/// The event that tells `/events` clients which moves stand on the board, not yet completed:
/// the first (`san` null: none) and the position after it, and all of them in order (`moves`,
/// UCI).
fn standing_event(position: &shakmaty::Chess, standing: &[shakmaty::Move], t: f64, at: SystemTime) -> serde_json::Value {
    let fen = |pos: &shakmaty::Chess| shakmaty::fen::Fen::from_position(pos, shakmaty::EnPassantMode::Legal).to_string();
    let mut after = position.clone();
    let mut first = None;
    let mut ucis = Vec::new();
    for &m in standing {
        if !after.is_legal(m) {
            break;
        }
        ucis.push(m.to_uci(shakmaty::CastlingMode::Standard).to_string());
        let san = shakmaty::san::SanPlus::from_move_and_play_unchecked(&mut after, m).to_string();
        first.get_or_insert((san, fen(&after)));
    }
    let (san, shown) = match first {
        Some((san, shown)) => (Some(san), shown),
        None => (None, fen(position)),
    };
    let side = position.turn().char().to_string();
    json!({"kind": "standing", "t": t, "side": side, "san": san, "uci": ucis.first(), "moves": ucis, "fen": shown, "at": unix_seconds(at)})
}

/// The distinct moments of a ruling's evidence and the ruling's own, the last three.
fn moments(r: &crate::rules::Ruling) -> Vec<f64> {
    let mut moments: Vec<f64> = r.evidence.iter().map(|e| e.t).collect();
    moments.push(r.t);
    moments.dedup_by(|a, b| (*a - *b).abs() < 0.05);
    let keep = moments.len().saturating_sub(3);
    moments.split_off(keep)
}

fn create(path: PathBuf) -> Result<BufWriter<File>, PipelineError> {
    File::create(&path).map(BufWriter::new).map_err(|e| output_error(&path, e))
}

impl Sinks {
    pub(super) fn create(config: &Config) -> Result<Sinks, PipelineError> {
        let out = config.out.clone();
        std::fs::create_dir_all(out.join("evidence")).map_err(|e| output_error(&out, e))?;
        if let Some(air) = &config.on_air {
            air.publish(&start_event(&config.start));
        }
        let layout = Layout { square: 48, margin: 24 };
        let overlay = config.overlay.then_some(None);
        Ok(Sinks {
            events: create(out.join("events.jsonl"))?,
            rulings: create(out.join("rulings.jsonl"))?,
            track: create(out.join("track.jsonl"))?,
            visits: create(out.join("visits.jsonl"))?,
            game: match &config.on_air {
                Some(air) => air.game().clone(),
                None => Arc::new(GameFile::new(out.join("game.pgn"), Game::new(&config.start, config.tags.clone()))),
            },
            on_air: config.on_air.clone(),
            echo: config.echo,
            layout,
            recent: VecDeque::new(),
            overlay,
            last_ruling: None,
            out,
        })
    }

    pub(super) fn write(&mut self, o: &Outcome, summary: &mut Summary) -> Result<(), PipelineError> {
        if let Some(start) = &o.start {
            if let Some(air) = &self.on_air {
                air.publish(&start_event(start));
            }
            let pgn = self.out.join("game.pgn");
            self.game
                .update(|g| {
                    *g = Game::new(start, g.tags().clone());
                    true
                })
                .map_err(|e| output_error(&pgn, e))?;
        }
        if let Some(warped) = &o.warped {
            let side = warped.rows().max(1) as u32;
            self.layout = Layout { square: side / 9, margin: side / 18 };
            if self.recent.back().is_none_or(|(t, _)| o.t - t >= 1.0 / EVIDENCE_FPS) {
                self.recent.push_back((o.t, warped.clone()));
            }
            while self.recent.front().is_some_and(|(t, _)| o.t - t > EVIDENCE_WINDOW_S) {
                self.recent.pop_front();
            }
        }
        for (event, frame) in &o.events {
            let mut line: serde_json::Value = serde_json::from_str(&event.to_json_line()).unwrap_or_default();
            line["frame"] = json!(frame);
            writeln!(self.events, "{line}").map_err(|e| output_error(&self.out.join("events.jsonl"), e))?;
            summary.events += 1;
        }
        let mut moved = false;
        self.last_ruling = None;
        // What goes on the air once the files are written: each record as rulings.jsonl has it,
        // with when it was decided; a ruling with its number and its evidence image.
        let mut on_air = Vec::new();
        for record in &o.records {
            let line = serde_json::to_string(record).unwrap_or_default();
            writeln!(self.rulings, "{line}").map_err(|e| output_error(&self.out.join("rulings.jsonl"), e))?;
            let mut published = self.on_air.as_ref().map(|_| serde_json::to_value(record).unwrap_or_default());
            match record {
                Record::Move(_) => {
                    summary.moves += 1;
                    moved = true;
                }
                Record::Ruling(r) => {
                    summary.rulings += 1;
                    let image = self.evidence(summary.rulings, r)?;
                    let clip = self.clip(summary.rulings, r)?;
                    self.last_ruling = Some(r.text.clone());
                    if let Some(p) = &mut published {
                        p["ruling"] = json!(summary.rulings);
                        p["image"] = json!(image.map(|name| format!("evidence/{name}")));
                        p["clip"] = json!(clip.map(|name| format!("evidence/{name}")));
                    }
                }
                Record::Warning(w) => {
                    summary.warnings += 1;
                    tracing::warn!("{:.1}s: {}", w.t, w.text);
                }
                Record::ClaimClosed(_) => {}
                Record::Correction(c) => {
                    summary.moves = summary.moves.saturating_sub(c.replaced.len() as u64);
                    tracing::warn!("{:.1}s: {}", c.t, c.text);
                }
            }
            if let Some(mut p) = published {
                p["at"] = json!(unix_seconds(o.decided_at));
                on_air.push(p);
            }
            if self.echo {
                println!("{line}");
            }
        }
        if o.reading.is_some() {
            let board: String = (0..64).map(|i| o.board.piece_at(fen_square(i)).map_or('.', |p| p.char())).collect();
            writeln!(self.track, "{}", json!({"frame": o.index, "t": o.t, "board": board, "hands": o.hands_over})).map_err(|e| output_error(&self.out.join("track.jsonl"), e))?;
        }
        for v in &o.visits {
            let line = json!({"sq": v.sq.to_string(), "from": v.from, "to": v.to, "t": v.at, "hand": v.hand.map(|h| h.to_string()), "change": v.change, "shift_px": v.shift, "z": v.z, "shift_z": v.shift_z, "contact_max": v.contact.max, "contact_held_s": v.contact.held_s, "cover_max": v.contact.cover, "p": v.p});
            writeln!(self.visits, "{line}").map_err(|e| output_error(&self.out.join("visits.jsonl"), e))?;
        }
        let pgn = self.out.join("game.pgn");
        let mut shown = false;
        self.game
            .update(|g| {
                o.records.iter().for_each(|r| g.record(r, &o.position));
                // A move standing on the board shows at once, before the opponent's touch
                // completes it.
                shown = g.show(&o.standing);
                moved || shown || !o.records.is_empty()
            })
            .map_err(|e| output_error(&pgn, e))?;
        if shown && self.on_air.is_some() {
            on_air.push(standing_event(&o.position, &o.standing, o.t, o.decided_at));
        }
        for (w, name) in [(&mut self.events, "events.jsonl"), (&mut self.rulings, "rulings.jsonl"), (&mut self.track, "track.jsonl"), (&mut self.visits, "visits.jsonl")] {
            w.flush().map_err(|e| output_error(&self.out.join(name), e))?;
        }
        if let Some(air) = &self.on_air {
            on_air.iter().for_each(|event| air.publish(event));
        }
        if let Some(slot) = self.overlay.as_mut().filter(|_| !o.end) {
            let overlay = match slot {
                Some(overlay) => overlay,
                None => slot.insert(Overlay::create(&self.out.join("annotated.mp4"), self.layout)?),
            };
            overlay.frame(o, self.layout)?;
        }
        Ok(())
    }

    /// The board when the ruling's evidence happened, the squares it names marked, as
    /// `evidence/NNN-ARTICLE-Ts.jpg` (one panel per distinct moment, up to three). Returns the
    /// file's name, if there was a frame to show.
    fn evidence(&mut self, n: u64, r: &crate::rules::Ruling) -> Result<Option<String>, PipelineError> {
        let mut panels = Vector::<Mat>::new();
        for t in moments(r) {
            let Some((_, frame)) = self.recent.iter().min_by(|a, b| (a.0 - t).abs().total_cmp(&(b.0 - t).abs())) else { continue };
            panels.push(self.marked(frame, r, t, 0.05, false)?);
        }
        if panels.is_empty() {
            return Ok(None);
        }
        let mut sheet = Mat::default();
        opencv::core::hconcat(&panels, &mut sheet)?;
        let name = format!("{n:03}-{}-{:.1}s.jpg", r.article, r.t);
        let path = self.out.join("evidence").join(&name);
        let ok = imgcodecs::imwrite(&path, &sheet, &Vector::new())?;
        if !ok {
            return Err(output_error(&path, "cannot write the image"));
        }
        Ok(Some(name))
    }

    /// The frames kept around the moments of the ruling's evidence ([`CLIP_AROUND_S`] either
    /// side, up to the ruling), its squares marked and each event named about its time, as
    /// `evidence/NNN-ARTICLE-Ts.webm` (VP8, which browsers play), at the evidence frames' rate.
    /// Returns the file's name, if there were frames to show.
    fn clip(&mut self, n: u64, r: &crate::rules::Ruling) -> Result<Option<String>, PipelineError> {
        let moments = moments(r);
        let frames: Vec<&(f64, Mat)> = self.recent.iter().filter(|(t, _)| moments.iter().any(|m| (t - m).abs() <= CLIP_AROUND_S)).collect();
        let Some((_, first)) = frames.first() else { return Ok(None) };
        let name = format!("{n:03}-{}-{:.1}s.webm", r.article, r.t);
        let path = self.out.join("evidence").join(&name);
        let fourcc = videoio::VideoWriter::fourcc('V', 'P', '8', '0')?;
        let mut writer = videoio::VideoWriter::new(&path, fourcc, EVIDENCE_FPS, first.size()?, true)?;
        if !writer.is_opened()? {
            return Err(output_error(&path, "OpenCV cannot write WebM (VP8) video here"));
        }
        for (t, frame) in &frames {
            writer.write(&self.marked(frame, r, *t, CLIP_NAMED_S, true)?)?;
        }
        writer.release()?;
        Ok(Some(name))
    }

    /// `frame`, at `t`, with the squares of the ruling's evidence events within `near` seconds
    /// of it marked and named (with `all`, the others marked too, thinner), and the time.
    fn marked(&self, frame: &Mat, r: &crate::rules::Ruling, t: f64, near: f64, all: bool) -> Result<Mat, PipelineError> {
        let mut out = frame.clone();
        let red = Scalar::new(0.0, 0.0, 255.0, 0.0);
        for e in &r.evidence {
            let Some(sq) = e.sq else { continue };
            let now = (e.t - t).abs() < near;
            if !now && !all {
                continue;
            }
            let (x, y, w, h) = self.layout.square_rect(sq);
            imgproc::rectangle(&mut out, Rect::new(x as i32, y as i32, w as i32, h as i32), red, if now { 3 } else { 1 }, imgproc::LINE_8, 0)?;
            if now {
                imgproc::put_text(&mut out, e.ev, Point::new(x as i32 + 2, y as i32 + 14), imgproc::FONT_HERSHEY_SIMPLEX, 0.4, red, 1, imgproc::LINE_AA, false)?;
            }
        }
        imgproc::put_text(&mut out, &format!("{t:.1}s"), Point::new(4, 16), imgproc::FONT_HERSHEY_SIMPLEX, 0.5, Scalar::new(0.0, 255.0, 255.0, 0.0), 1, imgproc::LINE_AA, false)?;
        Ok(out)
    }

    pub(super) fn progress(&self, summary: &Summary, dropped: u64) -> super::Progress {
        Progress { frames: summary.frames, t: summary.video_seconds, moves: summary.moves, plies: self.game.read(Game::plies), rulings: summary.rulings, dropped, ruling: self.last_ruling.clone() }
    }

    pub(super) fn finish(&mut self, summary: &Summary) -> Result<(), PipelineError> {
        let pgn = self.out.join("game.pgn");
        self.game.update(|_| true).map_err(|e| output_error(&pgn, e))?;
        if let Some(Some(overlay)) = self.overlay.take() {
            overlay.finish()?;
        }
        let path = self.out.join("summary.json");
        let mut doc = serde_json::to_value(summary).unwrap_or_default();
        doc["fps"] = json!(summary.frames as f64 / summary.seconds.max(1e-9));
        doc["real_time_factor"] = json!(summary.video_seconds / summary.seconds.max(1e-9));
        std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n").map_err(|e| output_error(&path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{Chess, Move, Role, Square};

    #[test]
    fn a_standing_event_names_the_first_move_and_the_position_after_it_and_lists_them_all() {
        let e4 = Move::Normal { role: Role::Pawn, from: Square::E2, capture: None, to: Square::E4, promotion: None };
        let e5 = Move::Normal { role: Role::Pawn, from: Square::E7, capture: None, to: Square::E5, promotion: None };
        let event = standing_event(&Chess::default(), &[e4, e5, e5], 2.0, SystemTime::UNIX_EPOCH);
        assert_eq!((event["san"].as_str(), event["uci"].as_str(), event["side"].as_str()), (Some("e4"), Some("e2e4"), Some("w")));
        assert_eq!(event["fen"], "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
        // The third cannot follow the second: it is not listed.
        assert_eq!(event["moves"], json!(["e2e4", "e7e5"]));
        let none = standing_event(&Chess::default(), &[], 2.0, SystemTime::UNIX_EPOCH);
        assert!(none["san"].is_null() && none["moves"] == json!([]));
    }
}
