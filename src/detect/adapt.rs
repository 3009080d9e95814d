//! Learning the set in front of the camera from one position we know (the start position at
//! calibration, or a `--reference` photo): a small correction of the piece head, anchored to the
//! shipped head, fitted on the reference's squares and kept only when squares held out of the fit
//! read better with it.
//!
//! The corrected scores of a square are `ln p + b + zᵀR`: `p` the shipped head's
//! probabilities, `b` a bias per class, `z` the head's input features
//! projected on their main directions in the reference (at most [`RANK`], whitened), and `R` a
//! residual per piece type, shared by both colours (a set whose king looks like its queen looks
//! so in both colours: the white pair is learnt from the black pair too). Every parameter is held
//! towards the shipped head (`b = 0`, `R = 0`) by a penalty. The penalty's strength is chosen by
//! cross-validation over the reference's squares, and a correction is kept only if it reads more
//! held-out squares right than the shipped head: a better log-loss alone is not enough (on the
//! real clip, a correction that only sharpened the start position's reading cost five moves of
//! seven). No temperature is fitted, for the same reason: a still reference is easier than the
//! frames of a game.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{CLASSES, Model};

/// Most directions of the features a correction uses.
pub const RANK: usize = 12;
/// Piece types the residual is shared over: empty, pawn, knight, bishop, rook, queen, king.
const TYPES: usize = 7;
/// Folds of the cross-validation.
const FOLDS: usize = 8;
/// Gradient steps of one fit.
const STEPS: usize = 300;
/// Adam's learning rate.
const LEARNING_RATE: f32 = 0.05;

/// What can go wrong learning, saving or using a set correction.
#[derive(Debug, thiserror::Error)]
pub enum AdaptError {
    /// The correction was learnt with another board model.
    #[error(
        "{origin}: made for board model {made_for}, but the model now is {model}; learn the set again \
         with `touchmove calibrate SOURCE --fen FEN` (the start position by default)"
    )]
    OtherModel {
        /// Where the correction came from.
        origin: String,
        /// The model it was made for.
        made_for: String,
        /// The model in use.
        model: String,
    },
    /// The correction's features do not match the model's.
    #[error("{origin}: a correction of {got} features, but the model gives {want}")]
    Shape {
        /// Where the correction came from.
        origin: String,
        /// Its size.
        got: usize,
        /// The model's.
        want: usize,
    },
    /// Reading or writing the file.
    #[error("{path}: {message}")]
    File {
        /// The file.
        path: String,
        /// What went wrong.
        message: String,
    },
}

/// One square of a reference: what the shipped head read, its features, and the truth.
#[derive(Clone, Debug)]
pub struct Sample {
    /// The shipped head's probabilities.
    pub classes: [f32; CLASSES],
    /// The head's input features.
    pub features: Vec<f32>,
    /// The true class (see [`CLASSES`]).
    pub class: usize,
    /// The cross-validation fold (copies of one square share a fold).
    pub fold: usize,
}

/// Which correction was kept.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Choice {
    /// None: the shipped head read as many held-out squares right.
    Shipped,
    /// A bias per class.
    Bias {
        /// The penalty's strength.
        penalty: f32,
    },
    /// A bias and the low-rank residual.
    Residual {
        /// The penalty's strength.
        penalty: f32,
    },
}

/// How the squares held out of each fit were read: by the shipped head and by the correction
/// chosen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HeldOut {
    /// Squares (copies included) scored.
    pub squares: usize,
    /// Read right by the shipped head.
    pub shipped_right: usize,
    /// Read right with the correction.
    pub corrected_right: usize,
    /// Mean log-loss, shipped head.
    pub shipped_loss: f32,
    /// Mean log-loss, with the correction.
    pub corrected_loss: f32,
}

/// A set correction, as saved beside a calibration (`NAME.set.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SetCorrection {
    /// The board model it was learnt with ([`Model::fingerprint`]).
    pub model: String,
    /// What it was learnt from (a source and frame, or a photo).
    pub reference: String,
    /// The correction kept.
    pub choice: Choice,
    /// The cross-validation's scores.
    pub held_out: HeldOut,
    /// The features' mean over the reference.
    mean: Vec<f32>,
    /// The main directions, scaled so that projections have unit variance ([`RANK`] or fewer).
    basis: Vec<Vec<f32>>,
    params: Params,
    /// The file it was loaded from, to name in errors.
    #[serde(skip)]
    file: Option<String>,
}

/// The correction's parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Params {
    bias: [f32; CLASSES],
    residual: Vec<[f32; TYPES]>,
}

impl Params {
    fn shipped(rank: usize) -> Params {
        Params { bias: [0.0; CLASSES], residual: vec![[0.0; TYPES]; rank] }
    }

    /// The corrected probabilities of a square whose shipped log-probabilities are `ln_p` and
    /// projected features `z`.
    fn probabilities(&self, ln_p: &[f32; CLASSES], z: &[f32]) -> [f32; CLASSES] {
        let mut score: [f32; CLASSES] = std::array::from_fn(|c| {
            let r: f32 = z.iter().zip(&self.residual).map(|(zj, row)| zj * row[piece_type(c)]).sum();
            ln_p[c] + self.bias[c] + r
        });
        let top = score.iter().copied().fold(f32::MIN, f32::max);
        let mut sum = 0.0;
        for s in &mut score {
            *s = (*s - top).exp();
            sum += *s;
        }
        score.map(|s| s / sum)
    }
}

/// The piece type of a class: 0 empty, 1..=6 pawn to king, either colour.
fn piece_type(class: usize) -> usize {
    if class > 6 { class - 6 } else { class }
}

/// The shipped head's log-probabilities, floored so that a zero stays finite.
fn ln(classes: &[f32; CLASSES]) -> [f32; CLASSES] {
    classes.map(|p| p.max(1e-6).ln())
}

/// A sample ready to fit: log-probabilities, projected features, truth.
struct Point {
    ln_p: [f32; CLASSES],
    z: Vec<f32>,
    class: usize,
}

impl SetCorrection {
    /// Learns a correction from a reference's squares (several copies of each, e.g. jittered
    /// warps, sharing a fold) for the model `fingerprint` names. Every candidate is scored on
    /// squares held out of its fit; the best is refitted on all of them.
    pub fn learn(fingerprint: &str, samples: &[Sample], reference: String) -> SetCorrection {
        let (mean, basis) = principal_directions(samples);
        let points: Vec<Point> = samples
            .iter()
            .map(|s| Point { ln_p: ln(&s.classes), z: project(&mean, &basis, &s.features), class: s.class })
            .collect();
        let candidates = [
            Choice::Shipped,
            Choice::Bias { penalty: 1.0 },
            Choice::Residual { penalty: 1.0 },
            Choice::Residual { penalty: 0.3 },
            Choice::Residual { penalty: 0.1 },
        ];
        let mut best: Option<(Choice, HeldOut)> = None;
        let mut shipped = HeldOut::default();
        for choice in candidates {
            let mut held = HeldOut::default();
            for fold in 0..FOLDS {
                let train: Vec<&Point> = points.iter().zip(samples).filter(|(_, s)| s.fold % FOLDS != fold).map(|(p, _)| p).collect();
                let test: Vec<&Point> = points.iter().zip(samples).filter(|(_, s)| s.fold % FOLDS == fold).map(|(p, _)| p).collect();
                let params = fit(choice, &train, basis.len());
                for p in test {
                    let probs = params.probabilities(&p.ln_p, &p.z);
                    held.squares += 1;
                    held.corrected_right += usize::from(argmax(&probs) == p.class);
                    held.corrected_loss -= probs[p.class].max(1e-6).ln();
                }
            }
            held.corrected_loss /= held.squares.max(1) as f32;
            if choice == Choice::Shipped {
                shipped = held;
            }
            // More squares right, or as many with a lower loss; and at least a whole square (all
            // its copies) more than the shipped head.
            let better = |b: &HeldOut| (held.corrected_right, -held.corrected_loss) > (b.corrected_right, -b.corrected_loss);
            let square = held.squares.div_ceil(64);
            if best.as_ref().is_none_or(|(_, b)| better(b)) && (choice == Choice::Shipped || held.corrected_right >= shipped.corrected_right + square) {
                best = Some((choice, held));
            }
        }
        let (choice, chosen) = best.expect("a candidate is always scored");
        let all: Vec<&Point> = points.iter().collect();
        let params = fit(choice, &all, basis.len());
        let held_out = HeldOut {
            squares: chosen.squares,
            shipped_right: shipped.corrected_right,
            corrected_right: chosen.corrected_right,
            shipped_loss: shipped.corrected_loss,
            corrected_loss: chosen.corrected_loss,
        };
        SetCorrection { model: fingerprint.to_owned(), reference, choice, held_out, mean, basis, params, file: None }
    }

    /// The corrected probabilities of a square the shipped head read as `classes` from
    /// `features`.
    pub fn apply(&self, classes: &[f32; CLASSES], features: &[f32]) -> [f32; CLASSES] {
        if self.choice == Choice::Shipped {
            return *classes;
        }
        self.params.probabilities(&ln(classes), &project(&self.mean, &self.basis, features))
    }

    /// Refuses a correction learnt with another model than `model`.
    pub fn check(&self, model: &Model) -> Result<(), AdaptError> {
        // The file it was read from where there is one, else what it was learnt from.
        let origin = || self.file.clone().unwrap_or_else(|| self.reference.clone());
        if self.model != model.fingerprint() {
            return Err(AdaptError::OtherModel { origin: origin(), made_for: self.model.clone(), model: model.fingerprint().to_owned() });
        }
        if self.mean.len() != model.channels || self.basis.iter().any(|b| b.len() != self.mean.len()) || self.params.residual.len() != self.basis.len() {
            return Err(AdaptError::Shape { origin: origin(), got: self.mean.len(), want: model.channels });
        }
        Ok(())
    }

    /// One line for people: what was kept and how the held-out squares read.
    pub fn summary(&self) -> String {
        let h = &self.held_out;
        let kept = match self.choice {
            Choice::Shipped => "no correction (the shipped head reads this set best)".to_owned(),
            Choice::Bias { penalty } => format!("a class bias (penalty {penalty})"),
            Choice::Residual { penalty } => format!("a bias and a rank-{} residual (penalty {penalty})", self.basis.len()),
        };
        format!(
            "{kept}; squares held out of the fit: {} of {} right (shipped head {}), log-loss {:.3} (shipped {:.3})",
            h.corrected_right, h.squares, h.shipped_right, h.corrected_loss, h.shipped_loss
        )
    }

    /// The file a calibration's set correction is kept in: `NAME.set.json` beside `NAME.json`.
    pub fn path_beside(calibration: &Path) -> std::path::PathBuf {
        calibration.with_extension("set.json")
    }

    /// Reads a correction saved by [`SetCorrection::save`].
    pub fn load(path: &Path) -> Result<SetCorrection, AdaptError> {
        let file = |message: String| AdaptError::File { path: path.display().to_string(), message };
        let text = std::fs::read_to_string(path).map_err(|e| file(e.to_string()))?;
        let set: SetCorrection = serde_json::from_str(&text).map_err(|e| file(format!("not a set correction: {e}")))?;
        Ok(SetCorrection { file: Some(path.display().to_string()), ..set })
    }

    /// Writes the correction as JSON, through a temporary file and a rename.
    pub fn save(&self, path: &Path) -> Result<(), AdaptError> {
        let file = |message: String| AdaptError::File { path: path.display().to_string(), message };
        let tmp = path.with_extension("json.tmp");
        let text = serde_json::to_string(self).map_err(|e| file(e.to_string()))? + "\n";
        std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, path)).map_err(|e| file(e.to_string()))
    }
}

fn argmax(p: &[f32; CLASSES]) -> usize {
    (0..CLASSES).fold(0, |b, c| if p[c] > p[b] { c } else { b })
}

/// The features' mean and main directions over the samples (power iteration with deflation),
/// each direction scaled by the inverse of its spread; directions with almost no spread are
/// dropped.
fn principal_directions(samples: &[Sample]) -> (Vec<f32>, Vec<Vec<f32>>) {
    let n = samples.len().max(1) as f64;
    let dim = samples.first().map_or(0, |s| s.features.len());
    let mut mean = vec![0.0f64; dim];
    for s in samples {
        for (m, f) in mean.iter_mut().zip(&s.features) {
            *m += f64::from(*f) / n;
        }
    }
    let mut cov = vec![0.0f64; dim * dim];
    let mut centred = vec![0.0f64; dim];
    for s in samples {
        for (c, (f, m)) in centred.iter_mut().zip(s.features.iter().zip(&mean)) {
            *c = f64::from(*f) - m;
        }
        for i in 0..dim {
            let ci = centred[i] / n;
            for (j, cj) in centred.iter().enumerate().skip(i) {
                cov[i * dim + j] += ci * cj;
            }
        }
    }
    for i in 0..dim {
        for j in 0..i {
            cov[i * dim + j] = cov[j * dim + i];
        }
    }
    let total: f64 = (0..dim).map(|i| cov[i * dim + i]).sum();
    let mut basis = Vec::new();
    for k in 0..RANK.min(dim) {
        let mut v: Vec<f64> = (0..dim).map(|i| 1.0 + ((i * 7 + k * 13) % 11) as f64 / 11.0).collect();
        let mut value = 0.0;
        for _ in 0..200 {
            let w: Vec<f64> = (0..dim).map(|i| cov[i * dim..][..dim].iter().zip(&v).map(|(a, b)| a * b).sum()).collect();
            let norm = w.iter().map(|x| x * x).sum::<f64>().sqrt();
            if norm == 0.0 {
                break;
            }
            value = norm;
            v = w.iter().map(|x| x / norm).collect();
        }
        if value <= 1e-4 * total || value == 0.0 {
            break;
        }
        for i in 0..dim {
            for j in 0..dim {
                cov[i * dim + j] -= value * v[i] * v[j];
            }
        }
        basis.push(v.iter().map(|x| (x / value.sqrt()) as f32).collect());
    }
    (mean.into_iter().map(|m| m as f32).collect(), basis)
}

fn project(mean: &[f32], basis: &[Vec<f32>], features: &[f32]) -> Vec<f32> {
    basis.iter().map(|b| b.iter().zip(features.iter().zip(mean)).map(|(w, (f, m))| w * (f - m)).sum()).collect()
}

/// Fits a candidate's parameters on `points` by Adam on the mean cross-entropy plus the
/// penalty towards the shipped head.
fn fit(choice: Choice, points: &[&Point], rank: usize) -> Params {
    let mut params = Params::shipped(rank);
    let (penalty, residual) = match choice {
        Choice::Shipped => return params,
        Choice::Bias { penalty } => (penalty, false),
        Choice::Residual { penalty } => (penalty, true),
    };
    let size = CLASSES + if residual { rank * TYPES } else { 0 };
    let (mut m, mut v) = (vec![0.0f32; size], vec![0.0f32; size]);
    let n = points.len().max(1) as f32;
    for step in 1..=STEPS {
        let mut grad = vec![0.0f32; size];
        for p in points {
            let probs = params.probabilities(&p.ln_p, &p.z);
            for c in 0..CLASSES {
                let d = (probs[c] - f32::from(u8::from(c == p.class))) / n;
                grad[c] += d;
                if residual {
                    for (j, zj) in p.z.iter().enumerate() {
                        grad[CLASSES + j * TYPES + piece_type(c)] += d * zj;
                    }
                }
            }
        }
        for (g, b) in grad.iter_mut().zip(&params.bias) {
            *g += 2.0 * penalty * b;
        }
        if residual {
            for (j, row) in params.residual.iter().enumerate() {
                for (t, r) in row.iter().enumerate() {
                    grad[CLASSES + j * TYPES + t] += 2.0 * penalty * r;
                }
            }
        }
        let (b1, b2) = (0.9f32, 0.999f32);
        let step_size = LEARNING_RATE * (1.0 - b2.powi(step as i32)).sqrt() / (1.0 - b1.powi(step as i32));
        let mut delta = vec![0.0f32; size];
        for i in 0..size {
            m[i] = b1 * m[i] + (1.0 - b1) * grad[i];
            v[i] = b2 * v[i] + (1.0 - b2) * grad[i] * grad[i];
            delta[i] = step_size * m[i] / (v[i].sqrt() + 1e-8);
        }
        for (b, d) in params.bias.iter_mut().zip(&delta) {
            *b -= d;
        }
        if residual {
            for (j, row) in params.residual.iter_mut().enumerate() {
                for (t, r) in row.iter_mut().enumerate() {
                    *r -= delta[CLASSES + j * TYPES + t];
                }
            }
        }
    }
    params
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Squares of a made-up set whose king reads as a queen and queen as a king in both colours
    /// (at 0.6 against 0.3): one feature tells them apart, which the shipped head ignores.
    fn swapped_set(copies: usize) -> Vec<Sample> {
        let board = shakmaty::Board::default();
        let mut out = Vec::new();
        for copy in 0..copies {
            for sq in shakmaty::Square::ALL {
                let class = crate::detect::reading::piece_class(board.piece_at(sq));
                let t = piece_type(class);
                let read = match t {
                    5 => class + 1, // queen read as king
                    6 => class - 1, // king read as queen
                    _ => class,
                };
                let mut classes = [0.01f32; CLASSES];
                classes[read] = 1.0 - 0.01 * 12.0;
                if read != class {
                    (classes[read], classes[class]) = (0.6, 0.3);
                    let rest = 0.1 / 11.0;
                    classes.iter_mut().enumerate().filter(|(c, _)| *c != read && *c != class).for_each(|(_, p)| *p = rest);
                }
                let jitter = ((copy * 64 + sq as usize) % 5) as f32 * 0.01;
                let mut features: Vec<f32> = (0..16).map(|i| ((i * 31 + sq as usize * 17 + copy) % 13) as f32 * 0.05).collect();
                features[3] = if t == 6 { 2.0 } else { 0.0 } + jitter;
                features[7] = t as f32 * 0.3 + jitter;
                out.push(Sample { classes, features, class, fold: (usize::from(sq.file()) + usize::from(sq.rank())) % FOLDS });
            }
        }
        out
    }

    fn correction(samples: &[Sample]) -> SetCorrection {
        let (mean, basis) = principal_directions(samples);
        let points: Vec<Point> = samples.iter().map(|s| Point { ln_p: ln(&s.classes), z: project(&mean, &basis, &s.features), class: s.class }).collect();
        let all: Vec<&Point> = points.iter().collect();
        let params = fit(Choice::Residual { penalty: 0.01 }, &all, basis.len());
        SetCorrection { model: String::new(), reference: String::new(), choice: Choice::Residual { penalty: 0.01 }, held_out: HeldOut::default(), mean, basis, params, file: None }
    }

    #[test]
    fn a_residual_learns_a_king_and_queen_the_head_swaps() {
        let samples = swapped_set(3);
        let set = correction(&samples);
        let right = samples.iter().filter(|s| argmax(&set.apply(&s.classes, &s.features)) == s.class).count();
        let shipped = samples.iter().filter(|s| argmax(&s.classes) == s.class).count();
        assert_eq!(shipped, samples.len() - 4 * 3);
        assert_eq!(right, samples.len(), "every square read right after the correction");
    }

    #[test]
    fn no_correction_is_kept_where_the_shipped_head_is_right() {
        // A head that reads every square right: nothing to learn; a fit must not make it worse.
        let mut samples = swapped_set(2);
        for s in &mut samples {
            s.classes = [0.02; CLASSES];
            s.classes[s.class] = 1.0 - 0.02 * 12.0;
        }
        let (mean, basis) = principal_directions(&samples);
        let points: Vec<Point> = samples.iter().map(|s| Point { ln_p: ln(&s.classes), z: project(&mean, &basis, &s.features), class: s.class }).collect();
        let all: Vec<&Point> = points.iter().collect();
        for choice in [Choice::Bias { penalty: 1.0 }, Choice::Residual { penalty: 0.01 }] {
            let params = fit(choice, &all, basis.len());
            assert!(points.iter().all(|p| argmax(&params.probabilities(&p.ln_p, &p.z)) == p.class), "{choice:?}");
        }
    }

    #[test]
    fn learning_keeps_a_correction_only_where_held_out_squares_read_better() {
        let swapped = swapped_set(3);
        let set = SetCorrection::learn("m", &swapped, "swapped".into());
        assert!(matches!(set.choice, Choice::Residual { .. }), "{}", set.summary());
        assert!(set.held_out.corrected_right > set.held_out.shipped_right, "{}", set.summary());
        assert!(swapped.iter().all(|s| argmax(&set.apply(&s.classes, &s.features)) == s.class));
        let mut right = swapped.clone();
        for s in &mut right {
            s.classes = [0.02; CLASSES];
            s.classes[s.class] = 1.0 - 0.02 * 12.0;
        }
        let set = SetCorrection::learn("m", &right, "right".into());
        assert_eq!(set.choice, Choice::Shipped, "{}", set.summary());
        assert_eq!(set.apply(&right[0].classes, &right[0].features), right[0].classes);
    }

    #[test]
    fn principal_directions_whiten_the_features() {
        let samples = swapped_set(2);
        let (mean, basis) = principal_directions(&samples);
        assert!(!basis.is_empty() && basis.len() <= RANK);
        let z: Vec<Vec<f32>> = samples.iter().map(|s| project(&mean, &basis, &s.features)).collect();
        for k in 0..basis.len() {
            let var = z.iter().map(|v| v[k] * v[k]).sum::<f32>() / z.len() as f32;
            assert!((var - 1.0).abs() < 0.05, "direction {k}: variance {var}");
        }
    }

    #[test]
    fn a_saved_correction_reads_back_the_same() {
        let set = correction(&swapped_set(1));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("board.set.json");
        set.save(&path).unwrap();
        let loaded = SetCorrection::load(&path).unwrap();
        // It remembers the file it came from, to name it when refused.
        assert_eq!(loaded.file.as_deref(), Some(path.display().to_string().as_str()));
        assert_eq!(SetCorrection { file: None, ..loaded }, set);
        std::fs::write(&path, "{}").unwrap();
        assert!(SetCorrection::load(&path).unwrap_err().to_string().contains("not a set correction"));
    }
}
