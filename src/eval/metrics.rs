//! The arithmetic of `eval`: pure functions from labels and predictions to counts, and the sums
//! of those counts over clips. Every ratio keeps its numerator and denominator, so a report can
//! say what it was computed from, and an empty denominator gives no score rather than 0 or 1.

use std::collections::BTreeMap;

use shakmaty::uci::UciMove;

use super::FramedEvent;
use super::labels::{ExpectedMove, ExpectedRuling, FrameTruth};
use super::predicted::{PredictedMove, PredictedRuling, PredictedVisit, Summary, TrackFrame};
use crate::events::Action;

/// Matched, missed and extra items of one kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Labelled items a prediction matched (true positives).
    pub matched: usize,
    /// Labelled items nothing matched (false negatives).
    pub missed: usize,
    /// Predictions that matched nothing (false positives).
    pub extra: usize,
}

impl Counts {
    /// matched / (matched + extra); `None` when nothing was predicted.
    pub fn precision(&self) -> Option<f64> {
        fraction(self.matched, self.matched + self.extra)
    }

    /// matched / (matched + missed); `None` when nothing was labelled.
    pub fn recall(&self) -> Option<f64> {
        fraction(self.matched, self.matched + self.missed)
    }

    /// Adds another set of counts.
    pub fn add(&mut self, other: Counts) {
        self.matched += other.matched;
        self.missed += other.missed;
        self.extra += other.extra;
    }
}

/// `hit` right out of `total`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ratio {
    /// How many were right.
    pub hit: usize,
    /// Out of how many.
    pub total: usize,
}

impl Ratio {
    /// hit / total; `None` when there was nothing to score.
    pub fn value(&self) -> Option<f64> {
        fraction(self.hit, self.total)
    }

    /// Adds another ratio's counts.
    pub fn add(&mut self, other: Ratio) {
        self.hit += other.hit;
        self.total += other.total;
    }
}

pub(super) fn fraction(num: usize, den: usize) -> Option<f64> {
    (den > 0).then(|| num as f64 / den as f64)
}

/// Physical events: counts per kind (`touch`, `lift`, ...).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EventScores {
    /// Counts per event kind.
    pub per_kind: BTreeMap<&'static str, Counts>,
    /// The sum over matches of |predicted frame - labelled frame|.
    pub offset_frames: u64,
    /// Labelled touches found and missed, by whether they moved the piece (`moved`, `unmoved`),
    /// where the labels say.
    pub touches: BTreeMap<&'static str, Counts>,
    /// The touch probability of the hands' visits against the labels.
    pub reliability: Reliability,
}

/// A reliability diagram of the touch probability: the visits binned by the probability given
/// (fifths), each bin with how many there were, how many a labelled touch falls in, and the sum
/// of the probabilities given.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Reliability {
    /// Per fifth of probability: (visits, touched, sum of p).
    pub bins: [(usize, usize, f64); 5],
}

impl Reliability {
    /// Adds another clip's visits.
    pub fn add(&mut self, other: &Reliability) {
        for (a, b) in self.bins.iter_mut().zip(other.bins) {
            *a = (a.0 + b.0, a.1 + b.1, a.2 + b.2);
        }
    }

    /// Visits counted.
    pub fn visits(&self) -> usize {
        self.bins.iter().map(|b| b.0).sum()
    }

    /// The expected calibration error: over the bins, weighed by their visits, the gap between
    /// the mean probability given and the fraction touched.
    pub fn calibration_error(&self) -> Option<f64> {
        let n = self.visits();
        (n > 0).then(|| self.bins.iter().filter(|b| b.0 > 0).map(|&(_, hit, sum)| (sum - hit as f64).abs()).sum::<f64>() / n as f64)
    }
}

/// A labelled touch falls in a visit when it comes between this long (seconds) before the hand
/// was first near the piece (the labels date a touch at the fingers' contact, the hand map sees
/// the hand a little before) and the view after. `training/fit_touch.py` counts the same way.
const VISIT_PRE_S: f64 = 0.6;

/// Bins every visit by the probability given, touched where a labelled touch of its square
/// falls in it.
pub fn touch_reliability(expected: &[FramedEvent], visits: &[PredictedVisit]) -> Reliability {
    let mut r = Reliability::default();
    for v in visits {
        let touched = expected.iter().any(|e| {
            matches!(e.event.action, Action::Touch(sq) if sq == v.sq) && e.event.t >= v.from - VISIT_PRE_S && e.event.t <= v.to
        });
        let bin = &mut r.bins[((v.p * 5.0) as usize).min(4)];
        *bin = (bin.0 + 1, bin.1 + usize::from(touched), bin.2 + v.p);
    }
    r
}

impl EventScores {
    /// The counts of every kind together.
    pub fn all(&self) -> Counts {
        let mut all = Counts::default();
        self.per_kind.values().for_each(|&c| all.add(c));
        all
    }

    /// Mean frames between a matched prediction and its label.
    pub fn mean_offset_frames(&self) -> Option<f64> {
        let matched = self.all().matched;
        (matched > 0).then(|| self.offset_frames as f64 / matched as f64)
    }

    /// Adds another clip's scores.
    pub fn add(&mut self, other: &EventScores) {
        for (&kind, &c) in &other.per_kind {
            self.per_kind.entry(kind).or_default().add(c);
        }
        self.offset_frames += other.offset_frames;
        for (&kind, &c) in &other.touches {
            self.touches.entry(kind).or_default().add(c);
        }
        self.reliability.add(&other.reliability);
    }
}

/// Matches predicted events to labelled ones of the same kind and square at most `tol` frames
/// apart, one to one and greedily in time: each labelled event, earliest first, takes the
/// earliest unmatched prediction that fits. A second prediction of one event is an extra.
pub fn match_events(expected: &[FramedEvent], predicted: &[FramedEvent], tol: u64) -> EventScores {
    let mut scores = EventScores::default();
    let fits = |e: &FramedEvent, p: &FramedEvent| {
        p.event.action.name() == e.event.action.name() && p.event.action.square() == e.event.action.square() && p.frame.abs_diff(e.frame) <= tol
    };
    let (pairs, used) = match_in_time(expected, predicted, |e| e.frame as f64, |p| p.frame as f64, fits);
    for (e, p) in pairs {
        let counts = scores.per_kind.entry(e.event.action.name()).or_default();
        match p {
            Some(p) => {
                counts.matched += 1;
                scores.offset_frames += p.frame.abs_diff(e.frame);
            }
            None => counts.missed += 1,
        }
        if let Some(moved) = e.moved {
            let split = scores.touches.entry(if moved { "moved" } else { "unmoved" }).or_default();
            if p.is_some() { split.matched += 1 } else { split.missed += 1 }
        }
    }
    for (p, _) in predicted.iter().zip(&used).filter(|(_, u)| !**u) {
        scores.per_kind.entry(p.event.action.name()).or_default().extra += 1;
    }
    scores
}

/// Matches one to one and greedily in time: each expected item, earliest first (by
/// `expected_t`), takes the earliest (by `predicted_t`) unused prediction that `fits` it.
/// Returns each expected item with its prediction, earliest first, and which predictions were
/// used.
fn match_in_time<'a, E, P>(
    expected: &'a [E],
    predicted: &'a [P],
    expected_t: impl Fn(&E) -> f64,
    predicted_t: impl Fn(&P) -> f64,
    fits: impl Fn(&E, &P) -> bool,
) -> (Vec<(&'a E, Option<&'a P>)>, Vec<bool>) {
    let mut exp: Vec<&E> = expected.iter().collect();
    exp.sort_by(|a, b| expected_t(a).total_cmp(&expected_t(b)));
    let mut order: Vec<usize> = (0..predicted.len()).collect();
    order.sort_by(|&a, &b| predicted_t(&predicted[a]).total_cmp(&predicted_t(&predicted[b])));
    let mut used = vec![false; predicted.len()];
    let pairs = exp
        .into_iter()
        .map(|e| {
            let found = order.iter().copied().find(|&j| !used[j] && fits(e, &predicted[j]));
            if let Some(j) = found {
                used[j] = true;
            }
            (e, found.map(|j| &predicted[j]))
        })
        .collect();
    (pairs, used)
}

/// The move sequence of one clip against its labels.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MoveScores {
    /// Labelled moves.
    pub expected: usize,
    /// Predicted moves.
    pub predicted: usize,
    /// The index (0-based ply) of the first move that differs, or where one sequence ends
    /// before the other; `None` when the sequences are equal.
    pub first_divergence: Option<usize>,
    /// Moves before the first divergence: the ones whose timing is scored.
    pub timed: usize,
    /// Of those, moves made inside their window.
    pub in_window: usize,
    /// Sum of the timing errors in seconds (0 inside the window, else the distance to it).
    pub timing_error_sum: f64,
    /// The largest timing error in seconds.
    pub timing_error_max: f64,
}

impl MoveScores {
    /// Whether the predicted sequence is exactly the labelled one.
    pub fn exact(&self) -> bool {
        self.first_divergence.is_none()
    }
}

/// A labelled move's window widened by `tol` seconds on both sides.
pub fn move_window(m: &ExpectedMove, tol: f64) -> (f64, f64) {
    (m.from - tol, m.to + tol)
}

/// Compares the sequences, and times each predicted move's `made_t` before the first
/// divergence against its labelled window widened by `tol` seconds. Labelled moves that share
/// one window (moves no photo shows apart: a gap between stills) match in any order.
pub fn score_moves(expected: &[ExpectedMove], predicted: &[PredictedMove], tol: f64) -> MoveScores {
    let mut same = 0;
    while let Some(e) = expected.get(same) {
        let run = expected[same..].iter().take_while(|o| (o.from, o.to) == (e.from, e.to)).count();
        if run > 1 && predicted.get(same..same + run).is_some_and(|p| sorted_ucis(p.iter().map(|m| &m.uci)) == sorted_ucis(expected[same..same + run].iter().map(|m| &m.uci))) {
            same += run;
        } else if predicted.get(same).is_some_and(|p| p.uci == e.uci) {
            same += 1;
        } else {
            break;
        }
    }
    let first_divergence = (same < expected.len().max(predicted.len())).then_some(same);
    let mut scores = MoveScores { expected: expected.len(), predicted: predicted.len(), first_divergence, timed: same, ..MoveScores::default() };
    for (e, p) in expected.iter().zip(predicted).take(same) {
        let (from, to) = move_window(e, tol);
        let error = if p.made_t < from { from - p.made_t } else { (p.made_t - to).max(0.0) };
        if error == 0.0 {
            scores.in_window += 1;
        }
        scores.timing_error_sum += error;
        scores.timing_error_max = scores.timing_error_max.max(error);
    }
    scores
}

/// The moves as UCI strings, sorted: a set of moves whose order is not known.
fn sorted_ucis<'a>(moves: impl Iterator<Item = &'a UciMove>) -> Vec<String> {
    let mut ucis: Vec<String> = moves.map(ToString::to_string).collect();
    ucis.sort();
    ucis
}

/// For each labelled move with a hand count: whether the predicted events of the mover's side
/// inside the move's window (widened by `tol` seconds) come from as many distinct hands.
/// `None` when no labelled move has a hand count.
pub fn hands_per_move(expected: &[ExpectedMove], predicted: &[FramedEvent], tol: f64) -> Option<Ratio> {
    let mut ratio = Ratio::default();
    for m in expected {
        let Some(want) = m.hands else { continue };
        let (from, to) = move_window(m, tol);
        let mut hands: Vec<u8> = predicted
            .iter()
            .filter(|p| p.event.hand.side == m.side && (from..=to).contains(&p.event.t))
            .map(|p| p.event.hand.number)
            .collect();
        hands.sort_unstable();
        hands.dedup();
        ratio.total += 1;
        ratio.hit += usize::from(hands.len() == want);
    }
    (ratio.total > 0).then_some(ratio)
}

/// Rulings: counts per article, false accusations and verdict disagreements.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RulingScores {
    /// Counts per article (`4.3.1`, `7.5.4`, ...).
    pub per_article: BTreeMap<&'static str, Counts>,
    /// Predicted `violation`s and `illegal`s that match no labelled ruling.
    pub false_accusations: usize,
    /// Matched rulings whose verdict differs from the label's.
    pub verdict_differs: usize,
}

impl RulingScores {
    /// The counts of every article together.
    pub fn all(&self) -> Counts {
        let mut all = Counts::default();
        self.per_article.values().for_each(|&c| all.add(c));
        all
    }

    /// Adds another clip's scores.
    pub fn add(&mut self, other: &RulingScores) {
        for (&article, &c) in &other.per_article {
            self.per_article.entry(article).or_default().add(c);
        }
        self.false_accusations += other.false_accusations;
        self.verdict_differs += other.verdict_differs;
    }
}

/// Matches predicted rulings to labelled ones of the same article and side whose window, widened
/// by `tol` seconds on both sides, holds the prediction's time; one to one, greedily in time.
/// An unmatched prediction is an extra for its article and, if it accuses (`violation`,
/// `illegal`), a false accusation; a `judgement` leaves the decision to the arbiter.
pub fn score_rulings(expected: &[ExpectedRuling], predicted: &[PredictedRuling], tol: f64) -> RulingScores {
    let mut scores = RulingScores::default();
    let fits = |e: &ExpectedRuling, p: &PredictedRuling| p.article == e.article && p.side == e.side && (e.from - tol..=e.to + tol).contains(&p.t);
    let (pairs, used) = match_in_time(expected, predicted, |e| e.from, |p| p.t, fits);
    for (e, p) in pairs {
        let counts = scores.per_article.entry(e.article.as_str()).or_default();
        match p {
            Some(p) => {
                counts.matched += 1;
                scores.verdict_differs += usize::from(p.verdict != e.verdict);
            }
            None => counts.missed += 1,
        }
    }
    for (p, _) in predicted.iter().zip(&used).filter(|(_, u)| !**u) {
        scores.per_article.entry(p.article.as_str()).or_default().extra += 1;
        scores.false_accusations += usize::from(p.verdict.accuses());
    }
    scores
}

/// Per-frame readings against the labelled frames.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FrameScores {
    /// Squares read right, out of 64 per frame with labelled pieces.
    pub squares: Ratio,
    /// Frames whose 64 squares were all read right.
    pub boards: Ratio,
    /// Frames whose number of hands over the board was right.
    pub hands: Ratio,
}

impl FrameScores {
    /// Adds another clip's scores.
    pub fn add(&mut self, other: &FrameScores) {
        self.squares.add(other.squares);
        self.boards.add(other.boards);
        self.hands.add(other.hands);
    }
}

/// Scores each labelled frame against the latest track line at or before it (the motion gate
/// skips frames whose reading holds); a frame before the first line counts as wrong.
pub fn score_frames(truth: &[FrameTruth], track: &[TrackFrame]) -> FrameScores {
    let mut scores = FrameScores::default();
    for f in truth {
        let reading = track.partition_point(|r| r.frame <= f.frame).checked_sub(1).map(|i| &track[i]);
        if let Some(pieces) = &f.pieces {
            let right = reading.map_or(0, |r| pieces.iter().zip(&r.board).filter(|(a, b)| a == b).count());
            scores.squares.add(Ratio { hit: right, total: 64 });
            scores.boards.add(Ratio { hit: usize::from(right == 64), total: 1 });
        }
        if let Some(hands) = f.hands {
            scores.hands.add(Ratio { hit: usize::from(reading.is_some_and(|r| r.hands == hands)), total: 1 });
        }
    }
    scores
}

/// Throughput of the analysis.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Speed {
    /// Frames decoded.
    pub frames: u64,
    /// Frames run through the model.
    pub analysed: u64,
    /// Wall seconds.
    pub seconds: f64,
    /// Seconds of video.
    pub video_seconds: f64,
}

impl Speed {
    /// Frames per wall second.
    pub fn fps(&self) -> Option<f64> {
        (self.seconds > 0.0).then(|| self.frames as f64 / self.seconds)
    }

    /// Seconds of video per wall second: above 1 is faster than real time.
    pub fn realtime_factor(&self) -> Option<f64> {
        (self.seconds > 0.0).then(|| self.video_seconds / self.seconds)
    }

    /// Adds another clip's counts and times.
    pub fn add(&mut self, other: &Speed) {
        self.frames += other.frames;
        self.analysed += other.analysed;
        self.seconds += other.seconds;
        self.video_seconds += other.video_seconds;
    }
}

/// The speed figures of a summary.
pub fn speed(summary: &Summary) -> Speed {
    Speed { frames: summary.frames, analysed: summary.analysed, seconds: summary.seconds, video_seconds: summary.video_seconds }
}

/// The moves of many clips together.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MoveTotals {
    /// Clips whose sequence was exact.
    pub exact_clips: Ratio,
    /// Labelled moves predicted right before the first divergence.
    pub plies: Ratio,
    /// Timed moves made inside their window.
    pub in_window: Ratio,
    /// Sum of timing errors in seconds.
    pub timing_error_sum: f64,
    /// The largest timing error in seconds.
    pub timing_error_max: f64,
}

impl MoveTotals {
    /// Adds one clip's moves.
    pub fn add(&mut self, m: &MoveScores) {
        self.exact_clips.add(Ratio { hit: usize::from(m.exact()), total: 1 });
        self.plies.add(Ratio { hit: m.timed, total: m.expected });
        self.in_window.add(Ratio { hit: m.in_window, total: m.timed });
        self.timing_error_sum += m.timing_error_sum;
        self.timing_error_max = self.timing_error_max.max(m.timing_error_max);
    }

    /// Mean timing error in seconds over the timed moves.
    pub fn timing_error_mean(&self) -> Option<f64> {
        (self.in_window.total > 0).then(|| self.timing_error_sum / self.in_window.total as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::Event;
    use crate::rules::{Article, Verdict};
    use shakmaty::Color;

    fn ev(frame: u64, line: &str) -> FramedEvent {
        FramedEvent { frame, event: Event::parse(line, 1).unwrap(), moved: None }
    }

    fn touch(frame: u64, sq: &str) -> FramedEvent {
        ev(frame, &format!(r#"{{"t":{},"ev":"touch","sq":"{sq}","hand":"w1"}}"#, frame as f64 / 20.0))
    }

    fn lift(frame: u64, sq: &str, hand: &str) -> FramedEvent {
        ev(frame, &format!(r#"{{"t":{},"ev":"lift","sq":"{sq}","hand":"{hand}"}}"#, frame as f64 / 20.0))
    }

    #[test]
    fn perfect_events_score_one() {
        let labels = [touch(20, "g1"), lift(70, "f1", "w1")];
        let s = match_events(&labels, &labels, 0);
        assert_eq!(s.all(), Counts { matched: 2, missed: 0, extra: 0 });
        assert_eq!((s.all().precision(), s.all().recall(), s.mean_offset_frames()), (Some(1.0), Some(1.0), Some(0.0)));
    }

    #[test]
    fn a_missed_event_lowers_recall_only() {
        let s = match_events(&[touch(20, "g1"), lift(70, "f1", "w1")], &[lift(71, "f1", "w1")], 3);
        assert_eq!(s.per_kind["touch"], Counts { matched: 0, missed: 1, extra: 0 });
        assert_eq!(s.per_kind["lift"], Counts { matched: 1, missed: 0, extra: 0 });
        assert_eq!((s.all().precision(), s.all().recall()), (Some(1.0), Some(0.5)));
        assert_eq!(s.offset_frames, 1);
    }

    #[test]
    fn touches_that_moved_the_piece_and_touches_that_did_not_are_counted_apart() {
        let moved = FramedEvent { moved: Some(true), ..touch(20, "g1") };
        let still = FramedEvent { moved: Some(false), ..touch(60, "e5") };
        let s = match_events(&[moved, still, touch(90, "h1")], &[touch(21, "g1")], 3);
        assert_eq!(s.touches["moved"], Counts { matched: 1, missed: 0, extra: 0 });
        assert_eq!(s.touches["unmoved"], Counts { matched: 0, missed: 1, extra: 0 });
        assert_eq!(s.per_kind["touch"], Counts { matched: 1, missed: 2, extra: 0 }, "a touch the labels say nothing of counts only with all");
    }

    #[test]
    fn a_duplicate_is_an_extra() {
        let s = match_events(&[touch(20, "g1")], &[touch(19, "g1"), touch(21, "g1")], 3);
        assert_eq!(s.per_kind["touch"], Counts { matched: 1, missed: 0, extra: 1 });
        assert_eq!(s.all().precision(), Some(0.5));
    }

    #[test]
    fn an_event_outside_the_tolerance_or_on_another_square_is_both_missed_and_extra() {
        let s = match_events(&[touch(20, "g1")], &[touch(24, "g1")], 3);
        assert_eq!(s.per_kind["touch"], Counts { matched: 0, missed: 1, extra: 1 });
        let s = match_events(&[touch(20, "g1")], &[touch(23, "g1")], 3);
        assert_eq!(s.per_kind["touch"], Counts { matched: 1, missed: 0, extra: 0 });
        let s = match_events(&[touch(20, "g1")], &[touch(20, "f1")], 3);
        assert_eq!(s.per_kind["touch"], Counts { matched: 0, missed: 1, extra: 1 });
        let s = match_events(&[touch(20, "g1")], &[lift(20, "g1", "w1")], 3);
        assert_eq!((s.per_kind["touch"].missed, s.per_kind["lift"].extra), (1, 1));
    }

    #[test]
    fn matching_is_one_to_one_and_earliest_first() {
        // Two labelled touches of g1; the earlier prediction goes to the earlier label.
        let s = match_events(&[touch(20, "g1"), touch(24, "g1")], &[touch(22, "g1"), touch(26, "g1")], 3);
        assert_eq!(s.per_kind["touch"], Counts { matched: 2, missed: 0, extra: 0 });
        assert_eq!(s.offset_frames, 4);
    }

    #[test]
    fn an_empty_clip_has_no_scores_rather_than_perfect_ones() {
        let s = match_events(&[], &[], 3);
        assert_eq!((s.all().precision(), s.all().recall(), s.mean_offset_frames()), (None, None, None));
        let s = match_events(&[], &[touch(5, "e2")], 3);
        assert_eq!((s.all().precision(), s.all().recall()), (Some(0.0), None));
        let m = score_moves(&[], &[], 1.0);
        assert!(m.exact());
        let mut totals = MoveTotals::default();
        totals.add(&m);
        assert_eq!((totals.plies.value(), totals.timing_error_mean()), (None, None));
        assert_eq!(score_rulings(&[], &[], 1.0), RulingScores::default());
        assert_eq!(score_frames(&[], &[]), FrameScores::default());
        assert_eq!(hands_per_move(&[], &[], 1.0), None);
    }

    fn mv(uci: &str, side: Color, from: f64, to: f64) -> ExpectedMove {
        ExpectedMove { uci: uci.parse().unwrap(), side, from, to, hands: Some(1) }
    }

    fn played(uci: &str, side: Color, made_t: f64) -> PredictedMove {
        PredictedMove { uci: uci.parse().unwrap(), side, t: made_t + 0.5, made_t }
    }

    #[test]
    fn moves_in_order_and_in_time_are_exact() {
        let labels = [mv("e2e4", Color::White, 1.0, 3.0), mv("e7e5", Color::Black, 4.0, 6.0)];
        let s = score_moves(&labels, &[played("e2e4", Color::White, 2.0), played("e7e5", Color::Black, 6.5)], 1.0);
        assert!(s.exact());
        assert_eq!((s.timed, s.in_window, s.timing_error_sum), (2, 2, 0.0));
    }

    #[test]
    fn timing_error_is_the_distance_to_the_widened_window() {
        let labels = [mv("e2e4", Color::White, 1.0, 3.0), mv("e7e5", Color::Black, 4.0, 6.0)];
        let s = score_moves(&labels, &[played("e2e4", Color::White, 4.5), played("e7e5", Color::Black, 2.0)], 1.0);
        assert_eq!((s.timed, s.in_window), (2, 0));
        assert!((s.timing_error_sum - 1.5).abs() < 1e-9 && (s.timing_error_max - 1.0).abs() < 1e-9, "{s:?}");
    }

    #[test]
    fn wrong_move_order_diverges_at_the_first_ply_and_times_nothing() {
        let labels = [mv("g1f3", Color::White, 1.0, 3.0), mv("g8f6", Color::Black, 4.0, 6.0)];
        let s = score_moves(&labels, &[played("g8f6", Color::Black, 2.0), played("g1f3", Color::White, 5.0)], 1.0);
        assert_eq!((s.first_divergence, s.timed, s.in_window), (Some(0), 0, 0));
        let mut totals = MoveTotals::default();
        totals.add(&s);
        assert_eq!((totals.exact_clips.value(), totals.plies.value()), (Some(0.0), Some(0.0)));
    }

    #[test]
    fn moves_sharing_a_window_match_in_any_order() {
        let labels = [mv("e2e4", Color::White, 0.0, 1.0), mv("c7c5", Color::Black, 1.0, 2.0), mv("g1f3", Color::White, 1.0, 2.0), mv("d7d6", Color::Black, 1.0, 2.0)];
        let play = |ucis: [&str; 4]| ucis.iter().enumerate().map(|(i, u)| played(u, if i % 2 == 0 { Color::White } else { Color::Black }, 1.5)).collect::<Vec<_>>();
        let s = score_moves(&labels, &play(["e2e4", "d7d6", "g1f3", "c7c5"]), 0.0);
        assert_eq!((s.first_divergence, s.timed), (None, 4));
        let s = score_moves(&labels, &play(["e2e4", "d7d6", "b1c3", "c7c5"]), 0.0);
        assert_eq!((s.first_divergence, s.timed), (Some(1), 1));
    }

    #[test]
    fn a_missing_or_extra_move_diverges_where_the_shorter_sequence_ends() {
        let labels = [mv("e2e4", Color::White, 1.0, 3.0), mv("e7e5", Color::Black, 4.0, 6.0)];
        let s = score_moves(&labels, &[played("e2e4", Color::White, 2.0)], 1.0);
        assert_eq!((s.first_divergence, s.timed), (Some(1), 1));
        let s = score_moves(&labels[..1], &[played("e2e4", Color::White, 2.0), played("e7e5", Color::Black, 5.0)], 1.0);
        assert_eq!((s.first_divergence, s.timed), (Some(1), 1));
    }

    #[test]
    fn hands_per_move_counts_distinct_hands_of_the_mover_in_the_window() {
        let mut two = mv("e1g1", Color::White, 1.0, 3.0);
        two.hands = Some(2);
        let one = mv("e1g1", Color::White, 1.0, 3.0);
        let events = [lift(20, "e1", "w1"), lift(30, "h1", "w2"), lift(40, "e7", "b1"), lift(200, "a2", "w3")];
        assert_eq!(hands_per_move(&[two], &events, 1.0), Some(Ratio { hit: 1, total: 1 }));
        assert_eq!(hands_per_move(&[one], &events, 1.0), Some(Ratio { hit: 0, total: 1 }));
        let unknown = ExpectedMove { hands: None, ..one };
        assert_eq!(hands_per_move(&[unknown], &events, 1.0), None);
    }

    fn rul(verdict: Verdict, article: Article, side: Color, t: f64) -> ExpectedRuling {
        ExpectedRuling { verdict, article, side, from: t, to: t }
    }

    fn said(verdict: Verdict, article: Article, side: Color, t: f64) -> PredictedRuling {
        PredictedRuling { verdict, article, side, t }
    }

    #[test]
    fn rulings_match_by_article_side_and_window() {
        let labels = [rul(Verdict::Violation, Article::A4_3_1, Color::White, 4.4)];
        let s = score_rulings(&labels, &[said(Verdict::Judgement, Article::A4_3_1, Color::White, 5.0)], 1.0);
        assert_eq!(s.per_article["4.3.1"], Counts { matched: 1, missed: 0, extra: 0 });
        assert_eq!((s.false_accusations, s.verdict_differs), (0, 1));
        // Wrong side, too late, wrong article: each misses the label and is an extra.
        for p in [
            said(Verdict::Violation, Article::A4_3_1, Color::Black, 4.4),
            said(Verdict::Violation, Article::A4_3_1, Color::White, 5.5),
            said(Verdict::Violation, Article::A4_3_2, Color::White, 4.4),
        ] {
            let s = score_rulings(&labels, &[p], 1.0);
            assert_eq!(s.per_article["4.3.1"].missed, 1, "{p:?}");
            assert_eq!(s.all().extra, 1, "{p:?}");
            assert_eq!(s.false_accusations, 1, "{p:?}");
        }
    }

    #[test]
    fn false_accusations_count_unmatched_violations_and_illegals_not_judgements() {
        let s = score_rulings(
            &[],
            &[
                said(Verdict::Violation, Article::A4_3_1, Color::White, 1.0),
                said(Verdict::Illegal, Article::A7_5_4, Color::Black, 2.0),
                said(Verdict::Judgement, Article::A4_2_1, Color::Black, 3.0),
            ],
            1.0,
        );
        assert_eq!(s.false_accusations, 2);
        assert_eq!(s.all(), Counts { matched: 0, missed: 0, extra: 3 });
        assert_eq!((s.all().precision(), s.all().recall()), (Some(0.0), None));
        // A duplicate ruling is an extra and, if it accuses, a false accusation.
        let labels = [rul(Verdict::Illegal, Article::A7_5_4, Color::White, 4.2)];
        let twice = [said(Verdict::Illegal, Article::A7_5_4, Color::White, 4.2), said(Verdict::Illegal, Article::A7_5_4, Color::White, 4.3)];
        let s = score_rulings(&labels, &twice, 1.0);
        assert_eq!((s.per_article["7.5.4"], s.false_accusations), (Counts { matched: 1, missed: 0, extra: 1 }, 1));
    }

    fn board(text: &str) -> super::super::Board {
        super::super::parse_board(text).unwrap()
    }

    const START: &str = "rnbqkbnrpppppppp................................PPPPPPPPRNBQKBNR";
    const E2_LIFTED: &str = "rnbqkbnrpppppppp................................PPPP.PPPRNBQKBNR";

    #[test]
    fn frames_take_the_latest_reading_and_count_squares_boards_and_hands() {
        let truth: Vec<FrameTruth> = [(0, START, 0), (1, START, 1), (2, E2_LIFTED, 1), (3, E2_LIFTED, 0)]
            .into_iter()
            .map(|(frame, p, hands)| FrameTruth { frame, pieces: Some(board(p)), hands: Some(hands) })
            .collect();
        // Frame 0 has no reading yet; frame 1 is read; frames 2 and 3 hold frame 1's reading.
        let track = [TrackFrame { frame: 1, t: 0.05, board: board(START), hands: 1 }];
        let s = score_frames(&truth, &track);
        assert_eq!(s.squares, Ratio { hit: 64 + 63 + 63, total: 256 });
        assert_eq!(s.boards, Ratio { hit: 1, total: 4 });
        assert_eq!(s.hands, Ratio { hit: 2, total: 4 });
    }

    #[test]
    fn speed_is_frames_and_video_per_wall_second() {
        let mut s = speed(&Summary { frames: 200, analysed: 50, seconds: 4.0, video_seconds: 10.0 });
        assert_eq!((s.fps(), s.realtime_factor()), (Some(50.0), Some(2.5)));
        s.add(&Speed { frames: 100, analysed: 100, seconds: 6.0, video_seconds: 5.0 });
        assert_eq!((s.fps(), s.realtime_factor()), (Some(30.0), Some(1.5)));
        assert_eq!(Speed::default().fps(), None);
    }
}
