//! Offline evaluation (`touchmove eval`): what the labels of a clip say happened, what the
//! pipeline predicted, and how the two compare. This module holds the types both sides share and
//! [`score`], which scores one clip; the submodules load ([`labels`], [`predicted`]), compare
//! ([`metrics`]), report ([`report`], [`plot`]) and gate ([`thresholds`]).

pub mod labels;
pub mod metrics;
pub mod plot;
pub mod predicted;
pub mod report;
pub mod thresholds;

use shakmaty::Piece;

use crate::events::Event;
use labels::Labels;
use metrics::{EventScores, FrameScores, MoveScores, Ratio, RulingScores, Speed};
use predicted::Predicted;

/// A physical event with the video frame it happened at.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FramedEvent {
    /// The frame index (frame `n` is at `n / fps` seconds).
    pub frame: u64,
    /// The event, in the contract of `docs/events.md`.
    pub event: Event,
    /// For a labelled touch whose labels say what the fingers did to the piece (a render's
    /// `displacement`): whether they moved it. Touches that moved nothing are the hard ones.
    pub moved: Option<bool>,
}

/// What stands on each square, in FEN reading order (a8, b8, ..., h8, a7, ..., h1).
pub type Board = [Option<Piece>; 64];

/// Parses 64 characters in FEN reading order, a FEN piece letter or `.` each.
pub fn parse_board(text: &str) -> Result<Board, String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() != 64 {
        return Err(format!("{} characters, expected 64 (a8..h1, a FEN letter or '.')", chars.len()));
    }
    let mut board = [None; 64];
    for (i, &c) in chars.iter().enumerate() {
        board[i] = match c {
            '.' => None,
            c => Some(Piece::from_char(c).ok_or_else(|| format!("character {}: {c:?} is neither a FEN piece letter nor '.'", i + 1))?),
        };
    }
    Ok(board)
}

/// The tolerances every comparison uses; the report states them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerances {
    /// A predicted event matches a labelled one of the same kind and square at most this many
    /// frames earlier or later.
    pub frames: u64,
    /// Seconds added after the end of a labelled move's window, and on both sides of a labelled
    /// ruling's window.
    pub seconds: f64,
}

/// The scores of one clip; each is `None` where the labels do not have what it needs.
#[derive(Clone, Debug, PartialEq)]
pub struct ClipScores {
    /// Physical events, per kind.
    pub events: Option<EventScores>,
    /// The move sequence and its timing.
    pub moves: Option<MoveScores>,
    /// Moves whose number of hands was predicted right.
    pub hands_per_move: Option<Ratio>,
    /// Rulings, per article, and false accusations.
    pub rulings: Option<RulingScores>,
    /// Per-frame squares, boards and hand counts.
    pub frames: Option<FrameScores>,
    /// Throughput of the analysis.
    pub speed: Speed,
}

/// Scores one clip's predictions against its labels. Predicted events of kinds the labels do
/// not score (`press`, `adjust`: [`labels::is_scored`]) are left out on both sides.
pub fn score(labels: &Labels, predicted: &Predicted, tol: Tolerances) -> ClipScores {
    let events: Vec<FramedEvent> = predicted.events.iter().copied().filter(|e| labels::is_scored(&e.event.action)).collect();
    ClipScores {
        events: labels.events.as_ref().map(|expected| metrics::EventScores {
            reliability: metrics::touch_reliability(expected, &predicted.visits),
            ..metrics::match_events(expected, &events, tol.frames)
        }),
        moves: labels.moves.as_ref().map(|expected| metrics::score_moves(expected, &predicted.moves, tol.seconds)),
        hands_per_move: labels.moves.as_ref().and_then(|expected| metrics::hands_per_move(expected, &events, tol.seconds)),
        rulings: labels.rulings.as_ref().map(|expected| metrics::score_rulings(expected, &predicted.rulings, tol.seconds)),
        frames: labels.frames.as_ref().map(|truth| metrics::score_frames(truth, &predicted.track)),
        speed: metrics::speed(&predicted.summary),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boards_parse_in_fen_reading_order_and_bad_ones_say_where() {
        let b = parse_board("rnbqkbnrpppppppp................................PPPPPPPPRNBQKBNR").unwrap();
        assert_eq!(b[0], Piece::from_char('r'));
        assert_eq!(b[63], Piece::from_char('R'));
        assert_eq!(b[20], None);
        assert!(parse_board("rnbq").unwrap_err().contains("4 characters"));
        let bad = format!("x{}", ".".repeat(63));
        assert!(parse_board(&bad).unwrap_err().contains("character 1"));
    }
}
