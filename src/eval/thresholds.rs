//! The CI gate: a committed file of bounds on the total metrics (`touchmove-eval-thresholds/1`)
//! and the check of a report's totals against it.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::report::Metric;

/// The format name a thresholds file carries.
pub const FORMAT: &str = "touchmove-eval-thresholds/1";

/// Bounds on total metrics, by the names the report gives them.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Thresholds {
    /// Must be [`FORMAT`].
    pub format: String,
    /// Each metric must be at least this (recalls, precisions, accuracies, speed).
    #[serde(default)]
    pub min: BTreeMap<String, f64>,
    /// Each metric must be at most this (false accusations, timing errors).
    #[serde(default)]
    pub max: BTreeMap<String, f64>,
}

impl Thresholds {
    /// Loads a thresholds file; errors name the file.
    pub fn load(path: &Path) -> Result<Thresholds, String> {
        let at = |e: String| format!("{}: {e}", path.display());
        let text = std::fs::read_to_string(path).map_err(|e| at(format!("cannot read: {e}")))?;
        let t: Thresholds = serde_json::from_str(&text).map_err(|e| at(e.to_string()))?;
        if t.format != FORMAT {
            return Err(at(format!("field `format`: {:?} is not {FORMAT:?}", t.format)));
        }
        if let Some((name, v)) = t.min.iter().chain(&t.max).find(|(_, v)| !v.is_finite()) {
            return Err(at(format!("`{name}`: {v} is not a number")));
        }
        Ok(t)
    }

    /// The bounds the metrics break, one sentence each; empty when all are met. A bound on a
    /// metric the report does not have (nothing labelled it) is broken: the gate cannot show it.
    pub fn check(&self, metrics: &[Metric]) -> Vec<String> {
        let find = |name: &str| metrics.iter().find(|m| m.name == name).and_then(|m| m.value);
        let mut failures = Vec::new();
        for (name, &bound) in &self.min {
            match find(name) {
                None => failures.push(format!("`{name}` was not computed (nothing labelled it); the minimum is {bound}")),
                Some(v) if v < bound => failures.push(format!("`{name}` {v:.3} is below the minimum {bound}")),
                Some(_) => {}
            }
        }
        for (name, &bound) in &self.max {
            match find(name) {
                None => failures.push(format!("`{name}` was not computed (nothing labelled it); the maximum is {bound}")),
                Some(v) if v > bound => failures.push(format!("`{name}` {v:.3} is above the maximum {bound}")),
                Some(_) => {}
            }
        }
        failures
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metric(name: &str, value: Option<f64>) -> Metric {
        Metric { name: name.into(), value, from: String::new() }
    }

    #[test]
    fn bounds_pass_at_the_limit_and_fail_beyond_or_when_absent() {
        let t = Thresholds {
            format: FORMAT.into(),
            min: [("events.recall".to_string(), 0.8), ("frames.board_accuracy".to_string(), 0.5)].into(),
            max: [("rulings.false_accusations".to_string(), 0.0)].into(),
        };
        let ok = [metric("events.recall", Some(0.8)), metric("frames.board_accuracy", Some(0.9)), metric("rulings.false_accusations", Some(0.0))];
        assert!(t.check(&ok).is_empty());
        let bad = [metric("events.recall", Some(0.79)), metric("rulings.false_accusations", Some(1.0))];
        let failures = t.check(&bad);
        assert_eq!(failures.len(), 3, "{failures:?}");
        assert!(failures.iter().any(|f| f.contains("frames.board_accuracy") && f.contains("not computed")));
    }

    #[test]
    fn load_rejects_other_formats_and_unknown_fields() {
        let scratch = tempfile::Builder::new().prefix("touchmove-thresholds-").tempdir().unwrap();
        let path = scratch.path().join("thresholds.json");
        std::fs::write(&path, r#"{"format":"touchmove-eval-thresholds/1","min":{"events.recall":0.5}}"#).unwrap();
        assert_eq!(Thresholds::load(&path).unwrap().min["events.recall"], 0.5);
        std::fs::write(&path, r#"{"format":"x","min":{}}"#).unwrap();
        assert!(Thresholds::load(&path).unwrap_err().contains("field `format`"));
        std::fs::write(&path, r#"{"format":"touchmove-eval-thresholds/1","minimum":{}}"#).unwrap();
        assert!(Thresholds::load(&path).unwrap_err().contains("minimum"));
    }
}
