//! What the rule engine says: moves, rulings, warnings and closed claim windows, and their JSON
//! Lines form (the rulings contract).

use std::fmt;

use serde::ser::{Serialize, SerializeMap, Serializer};
use shakmaty::{CastlingMode, Color, Move, Square};

/// How sure the engine is that the Laws were broken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// A breach of Article 4 or 6 that the arbiter enforces but that is not an illegal move.
    Violation,
    /// An illegal move, or an act penalised as one (7.5.1 to 7.5.4).
    Illegal,
    /// The arbiter must decide; the text says on what.
    Judgement,
}

impl Verdict {
    /// The contract's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Violation => "violation",
            Verdict::Illegal => "illegal",
            Verdict::Judgement => "judgement",
        }
    }

    /// The verdict the contract spells `s`, if any.
    pub fn parse(s: &str) -> Option<Verdict> {
        [Verdict::Violation, Verdict::Illegal, Verdict::Judgement].into_iter().find(|v| v.as_str() == s)
    }

    /// Whether the verdict accuses the player (`violation` or `illegal`), as opposed to leaving
    /// the decision to the arbiter.
    pub fn accuses(self) -> bool {
        matches!(self, Verdict::Violation | Verdict::Illegal)
    }
}

/// The article of the FIDE Laws (2023) a ruling rests on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum Article {
    A4_2_1,
    A4_3_1,
    A4_3_2,
    A4_3_3,
    A4_4_1,
    A4_4_2,
    A4_4_3,
    A4_4_4,
    A4_5,
    A4_7,
    A4_7_2,
    A4_8,
    A6_2_3,
    A7_4,
    A7_5_1,
    A7_5_2,
    A7_5_3,
    A7_5_4,
}

impl Article {
    /// Every article a record can name.
    pub const ALL: [Article; 18] = [
        Article::A4_2_1,
        Article::A4_3_1,
        Article::A4_3_2,
        Article::A4_3_3,
        Article::A4_4_1,
        Article::A4_4_2,
        Article::A4_4_3,
        Article::A4_4_4,
        Article::A4_5,
        Article::A4_7,
        Article::A4_7_2,
        Article::A4_8,
        Article::A6_2_3,
        Article::A7_4,
        Article::A7_5_1,
        Article::A7_5_2,
        Article::A7_5_3,
        Article::A7_5_4,
    ];

    /// The article whose number is `s` (`"4.3.1"`), if the contract knows it.
    pub fn parse(s: &str) -> Option<Article> {
        Article::ALL.into_iter().find(|a| a.as_str() == s)
    }

    /// The article's number as the Laws print it.
    pub fn as_str(self) -> &'static str {
        match self {
            Article::A4_2_1 => "4.2.1",
            Article::A4_3_1 => "4.3.1",
            Article::A4_3_2 => "4.3.2",
            Article::A4_3_3 => "4.3.3",
            Article::A4_4_1 => "4.4.1",
            Article::A4_4_2 => "4.4.2",
            Article::A4_4_3 => "4.4.3",
            Article::A4_4_4 => "4.4.4",
            Article::A4_5 => "4.5",
            Article::A4_7 => "4.7",
            Article::A4_7_2 => "4.7.2",
            Article::A4_8 => "4.8",
            Article::A6_2_3 => "6.2.3",
            Article::A7_4 => "7.4",
            Article::A7_5_1 => "7.5.1",
            Article::A7_5_2 => "7.5.2",
            Article::A7_5_3 => "7.5.3",
            Article::A7_5_4 => "7.5.4",
        }
    }

    /// Whether Article 4.8 limits the opponent's right to claim this breach (Articles 4.1-4.7).
    pub fn is_claimable_under_4_8(self) -> bool {
        self.as_str().starts_with("4.") && self != Article::A4_8
    }
}

impl fmt::Display for Article {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One observed event that a ruling rests on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Evidence {
    /// When it happened.
    pub t: f64,
    /// The event's kind, as in the event contract.
    pub ev: &'static str,
    /// The square it named.
    pub sq: Option<Square>,
}

/// A move that was completed on the board.
#[derive(Clone, Debug, PartialEq)]
pub struct MoveRecord {
    /// When the move was completed (clock press, the opponent's first touch, or end of input).
    pub t: f64,
    /// When the move was made: the hand let go of the last piece (1.3, 4.7).
    pub made_t: f64,
    /// Half-move number, 1 for the first move of the input.
    pub ply: u32,
    /// Who played it.
    pub side: Color,
    /// The move.
    pub m: Move,
    /// Standard algebraic notation with check marks.
    pub san: String,
    /// FEN of the position after the move.
    pub fen: String,
}

/// A finding about the Laws.
#[derive(Clone, Debug, PartialEq)]
pub struct Ruling {
    /// When the breach happened (or, for illegal moves, when the move was completed).
    pub t: f64,
    /// How sure the finding is.
    pub verdict: Verdict,
    /// The article it rests on.
    pub article: Article,
    /// The player in breach.
    pub side: Color,
    /// The moves the Laws allow after the breach; empty where no move is prescribed.
    pub required: Vec<Move>,
    /// One plain sentence an arbiter can read out.
    pub text: String,
    /// The events it rests on.
    pub evidence: Vec<Evidence>,
}

/// An observation that contradicts the board; the engine resynchronised.
#[derive(Clone, Debug, PartialEq)]
pub struct Warning {
    /// When.
    pub t: f64,
    /// What was wrong and what the engine did about it.
    pub text: String,
}

/// The moment a player lost the right to claim an earlier breach (4.8).
#[derive(Clone, Debug, PartialEq)]
pub struct ClaimClosed {
    /// When the claimant touched a piece with the intention of moving or capturing it.
    pub t: f64,
    /// The claimant.
    pub side: Color,
    /// When the breach happened.
    pub breach_t: f64,
    /// The article of the breach.
    pub breach_article: Article,
    /// One plain sentence.
    pub text: String,
}

/// Moves already recorded that the game decoder now reads otherwise (live, where a move goes
/// out before the readings settle it): they are taken back from `ply` on, and the moves that
/// replace them follow as moves of their own.
#[derive(Clone, Debug, PartialEq)]
pub struct Correction {
    /// When the decoder changed its mind.
    pub t: f64,
    /// The first ply taken back from the record: the moves recorded from it on are taken back
    /// (a move standing on the board, completed by the first move taken back, is recorded
    /// again when its replacement completes it).
    pub ply: u32,
    /// The moves taken back, in SAN.
    pub replaced: Vec<String>,
    /// The moves the decoder reads in their place, in SAN.
    pub by: Vec<String>,
    /// One plain sentence.
    pub text: String,
}

/// One line of the engine's output.
#[derive(Clone, Debug, PartialEq)]
pub enum Record {
    /// A completed move.
    Move(MoveRecord),
    /// A ruling.
    Ruling(Ruling),
    /// A contradiction between the events and the board.
    Warning(Warning),
    /// A claim window that closed.
    ClaimClosed(ClaimClosed),
    /// Moves taken back and read otherwise.
    Correction(Correction),
}

impl Record {
    /// When the record happened.
    pub fn t(&self) -> f64 {
        match self {
            Record::Move(r) => r.t,
            Record::Ruling(r) => r.t,
            Record::Warning(r) => r.t,
            Record::ClaimClosed(r) => r.t,
            Record::Correction(r) => r.t,
        }
    }
}

/// A move in UCI, castling as the king's move (`e1g1`).
pub fn uci(m: Move) -> String {
    m.to_uci(CastlingMode::Standard).to_string()
}

fn side(c: Color) -> String {
    c.char().to_string()
}

impl Serialize for Evidence {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("t", &self.t)?;
        map.serialize_entry("ev", self.ev)?;
        if let Some(sq) = self.sq {
            map.serialize_entry("sq", &sq.to_string())?;
        }
        map.end()
    }
}

impl Serialize for Record {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("t", &self.t())?;
        match self {
            Record::Move(r) => {
                map.serialize_entry("kind", "move")?;
                map.serialize_entry("ply", &r.ply)?;
                map.serialize_entry("side", &side(r.side))?;
                map.serialize_entry("uci", &uci(r.m))?;
                map.serialize_entry("san", &r.san)?;
                map.serialize_entry("fen", &r.fen)?;
                map.serialize_entry("made_t", &r.made_t)?;
            }
            Record::Ruling(r) => {
                map.serialize_entry("kind", "ruling")?;
                map.serialize_entry("verdict", r.verdict.as_str())?;
                map.serialize_entry("article", r.article.as_str())?;
                map.serialize_entry("side", &side(r.side))?;
                let required: Vec<String> = r.required.iter().map(|&m| uci(m)).collect();
                map.serialize_entry("required", &required)?;
                map.serialize_entry("text", &r.text)?;
                map.serialize_entry("evidence", &r.evidence)?;
            }
            Record::Warning(r) => {
                map.serialize_entry("kind", "warning")?;
                map.serialize_entry("text", &r.text)?;
            }
            Record::ClaimClosed(r) => {
                map.serialize_entry("kind", "claim_closed")?;
                map.serialize_entry("article", Article::A4_8.as_str())?;
                map.serialize_entry("side", &side(r.side))?;
                map.serialize_entry("breach_t", &r.breach_t)?;
                map.serialize_entry("breach_article", r.breach_article.as_str())?;
                map.serialize_entry("text", &r.text)?;
            }
            Record::Correction(r) => {
                map.serialize_entry("kind", "correction")?;
                map.serialize_entry("ply", &r.ply)?;
                map.serialize_entry("replaced", &r.replaced)?;
                map.serialize_entry("by", &r.by)?;
                map.serialize_entry("text", &r.text)?;
            }
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn articles_and_verdicts_parse_back_from_their_spelling() {
        for a in Article::ALL {
            assert_eq!(Article::parse(a.as_str()), Some(a));
        }
        assert_eq!(Article::parse("4.6"), None);
        for v in [Verdict::Violation, Verdict::Illegal, Verdict::Judgement] {
            assert_eq!(Verdict::parse(v.as_str()), Some(v));
        }
        assert_eq!(Verdict::parse("guilty"), None);
        assert!(Verdict::Illegal.accuses() && Verdict::Violation.accuses() && !Verdict::Judgement.accuses());
    }
}
