//! The arbiter's decisions on rulings, and the token that lets one be sent: a decision is
//! `{"decision": "uphold" | "dismiss", "note": "..."}`, appended to `decisions.jsonl` and
//! flushed before it is acknowledged.

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// What the arbiter made of a ruling.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Word {
    /// The ruling stands.
    Uphold,
    /// The ruling is set aside.
    Dismiss,
}

impl Word {
    /// As the PGN comment says it.
    pub fn past(self) -> &'static str {
        match self {
            Word::Uphold => "upheld",
            Word::Dismiss => "dismissed",
        }
    }

    /// As `decisions.jsonl` and `/events` spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Word::Uphold => "uphold",
            Word::Dismiss => "dismiss",
        }
    }
}

/// A decision as posted.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Decision {
    /// Uphold or dismiss.
    pub decision: Word,
    /// What the arbiter adds, if anything.
    #[serde(default)]
    pub note: Option<String>,
}

/// A note longer than this many characters is refused: it is a note, not a report.
const NOTE_MAX: usize = 1000;

impl Decision {
    /// The decision in `body` (JSON), or why it is not one.
    pub fn parse(body: &[u8]) -> Result<Decision, String> {
        let d: Decision = serde_json::from_slice(body).map_err(|e| format!("not a decision ({e}): expected {{\"decision\": \"uphold\" | \"dismiss\", \"note\": \"...\"}}"))?;
        match &d.note {
            Some(note) if note.chars().count() > NOTE_MAX => Err(format!("the note is longer than {NOTE_MAX} characters")),
            _ => Ok(d),
        }
    }

    /// The PGN comment: `arbiter: upheld` or `arbiter: dismissed: NOTE`.
    pub fn comment(&self) -> String {
        match self.note.as_deref().map(str::trim).filter(|n| !n.is_empty()) {
            Some(note) => format!("arbiter: {}: {note}", self.decision.past()),
            None => format!("arbiter: {}", self.decision.past()),
        }
    }
}

/// `decisions.jsonl`, made empty when the run starts (like the run's other outputs: a ruling's
/// number means nothing in another run) and appended to at each decision.
#[derive(Debug)]
pub struct DecisionLog {
    file: File,
}

impl DecisionLog {
    /// The log at `path`, empty, its folder made if need be.
    pub fn create(path: &Path) -> std::io::Result<DecisionLog> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        Ok(DecisionLog { file: OpenOptions::new().create(true).write(true).truncate(true).open(path)? })
    }

    /// Appends `line` in one write and flushes it to the disk.
    pub fn append(&mut self, line: &serde_json::Value) -> std::io::Result<()> {
        self.file.write_all(format!("{line}\n").as_bytes())?;
        self.file.sync_data()
    }
}

/// The arbiter's token: decisions carry it as `Authorization: Bearer TOKEN`.
#[derive(Clone)]
pub struct Token(String);

/// A `--token-file` that cannot serve.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// It cannot be read.
    #[error("--token-file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// It holds no token, or one too short to guess at.
    #[error("--token-file {}: {why}", path.display())]
    Unfit {
        /// The file.
        path: PathBuf,
        /// Why.
        why: &'static str,
    },
    /// The system gave no randomness.
    #[error("no random token: {0}")]
    Random(getrandom::Error),
}

impl Token {
    /// A fresh random token: 128 bits, in hex.
    pub fn random() -> Result<Token, TokenError> {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).map_err(TokenError::Random)?;
        Ok(Token(bytes.iter().map(|b| format!("{b:02x}")).collect()))
    }

    /// The token in `path`: its first line, without surrounding blanks; at least 8 visible
    /// ASCII characters.
    pub fn read(path: &Path) -> Result<Token, TokenError> {
        let text = std::fs::read_to_string(path).map_err(|source| TokenError::Read { path: path.to_owned(), source })?;
        let token = text.lines().next().unwrap_or_default().trim();
        let unfit = |why| Err(TokenError::Unfit { path: path.to_owned(), why });
        if token.is_empty() {
            return unfit(if text.trim().is_empty() { "the file is empty" } else { "its first line is empty" });
        }
        if !token.bytes().all(|b| b.is_ascii_graphic()) {
            return unfit("the token must be visible ASCII characters, no spaces");
        }
        if token.len() < 8 {
            return unfit("the token is shorter than 8 characters");
        }
        Ok(Token(token.to_string()))
    }

    /// The token, to print.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether an `Authorization` header's value carries this token (compared in constant time).
    pub fn admits(&self, authorization: Option<&str>) -> bool {
        // The scheme is case-insensitive (RFC 9110).
        let Some(given) = authorization.and_then(|h| h.split_once(' ')).filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer")).map(|(_, t)| t.trim()) else {
            return false;
        };
        given.len() == self.0.len() && given.bytes().zip(self.0.bytes()).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(..)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_parse_or_say_why_not() {
        let d = Decision::parse(br#"{"decision":"uphold"}"#).unwrap();
        assert_eq!(d.comment(), "arbiter: upheld");
        let d = Decision::parse(br#"{"decision":"dismiss","note":" the knight was adjusted "}"#).unwrap();
        assert_eq!(d.comment(), "arbiter: dismissed: the knight was adjusted");
        for (bad, says) in [(&br#"{"decision":"maybe"}"#[..], "unknown variant"), (b"{}", "missing field"), (b"uphold", "expected"), (br#"{"decision":"uphold","by":"me"}"#, "unknown field")] {
            let e = Decision::parse(bad).unwrap_err();
            assert!(e.contains(says), "{e}");
        }
    }

    #[test]
    fn tokens_are_random_read_and_checked() {
        let (a, b) = (Token::random().unwrap(), Token::random().unwrap());
        assert_eq!(a.as_str().len(), 32);
        assert_ne!(a.as_str(), b.as_str());
        assert!(a.admits(Some(&format!("Bearer {}", a.as_str()))));
        assert!(!a.admits(Some(&format!("Bearer {}", b.as_str()))));
        assert!(!a.admits(Some(a.as_str())) && !a.admits(None));
        // The scheme is case-insensitive.
        assert!(a.admits(Some(&format!("bearer {}", a.as_str()))));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "s3cret-token\n").unwrap();
        assert!(Token::read(&path).unwrap().admits(Some("Bearer s3cret-token")));
        assert!(!Token::read(&path).unwrap().admits(Some("Bearer S3CRET-TOKEN")), "the token is case-sensitive");
        std::fs::write(&path, "\n\ns3cret-token\n").unwrap();
        assert!(Token::read(&path).unwrap_err().to_string().contains("first line is empty"));
        std::fs::write(&path, "short").unwrap();
        assert!(Token::read(&path).unwrap_err().to_string().contains("shorter than 8"));
        let missing = dir.path().join("missing");
        assert!(Token::read(&missing).unwrap_err().to_string().contains("missing"));
    }
}
