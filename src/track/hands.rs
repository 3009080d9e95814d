//! Hand tracks: blobs of each side's hand map, matched frame to frame, with stable ids.
//!
//! A blob grows from cells where either map is at or above [`Options::hand_min`] over 4-connected
//! neighbours down to [`Options::hand_grow`], so a palm and its arm stay one blob; blobs under
//! [`Options::hand_min_cells`] are noise. A blob belongs to the player whose board edge its arm
//! crosses (the edge whose margin it covers most); over a side edge, to the track it overlaps or
//! else to the player expected to act; reaching only the opponent's margin while mostly covering a
//! hand seen over the board in the last reading, to that hand's player (a palm over the far rank
//! whose arm the model lost); crossing no margin, to the track it overlaps, else to the player
//! whose edge is clearly the nearest (the expected player's for a side edge). A side's blob
//! takes over the track it overlaps most (or the nearest, within two squares; four when its arm
//! crosses the same half of the edge; an arm across the other half of the edge is another hand,
//! unless the blob covers a hand resting in the margin, coming back in); a fragment within [`FRAGMENT_GAP`] cells of a hand already matched joins it, and so
//! does one with no arm in its player's margin within [`ARMLESS_GAP`] (a palm the model cut off at
//! the wrist: a second hand has an arm of its own). A new blob gets its number from the board edge
//! its arm crosses: the arm of a player's right hand comes in on the right half of that player's
//! edge (White at the bottom, Black at the top, seen from the player), numbered 1, and the left
//! hand's numbered 2. A blob with no arm in the margin takes the free number. A hand that comes
//! while no other of its side is in view and takes another number than that side's last hand may be
//! the same hand back: its number is in doubt ([`Hands::doubtful`]); so is that of a hand that comes
//! beside another of its side without an arm of its own across the other half of the edge (a
//! fragment of that hand, as likely as a second one). A side has at most two hands:
//! a third blob joins the nearest track.

use shakmaty::{Color, Square};

use super::Options;
use crate::detect::HandMap;
use crate::events::Hand;

/// Blobs of one side this close (cells, in any direction) to a hand already matched in the same
/// reading are part of it: the model often cuts an arm at the wrist.
const FRAGMENT_GAP: usize = 3;
/// A blob with no arm in its player's margin this close (cells: two squares) to a hand of that
/// side already matched is part of it too: a palm the model cut off its arm. A second hand
/// comes with an arm of its own.
const ARMLESS_GAP: usize = 12;

/// Seconds after a track was last seen that its birth is kept to date events by.
const BIRTHS_KEPT_S: f64 = 120.0;
/// How long after a track was last seen an event can still be its (a hand's leaving is
/// decided after a grace; see `track::LEFT_GRACE_S`).
const DOUBT_AFTER_S: f64 = 2.0;

/// One hand (with its arm) as the tracker follows it.
#[derive(Clone, Debug, PartialEq)]
pub struct Track {
    /// Its id: side and number (`w1`, `b2`).
    pub hand: Hand,
    /// The cells of the hand map it covers in the latest reading, as (row, column).
    pub cells: Vec<(usize, usize)>,
    /// Whether any of its cells lies over the playing area.
    pub over_board: bool,
    /// Time of the latest reading that saw it, in seconds.
    pub seen: f64,
    /// The hand its arm says it is (1 right, 2 left), once an arm was seen.
    arm: Option<u8>,
}

impl Track {
    /// How many of `cells` it covers.
    fn overlap(&self, cells: &[(usize, usize)]) -> usize {
        cells.iter().filter(|c| self.cells.binary_search(c).is_ok()).count()
    }

    /// The distance, in squares, from the centre of `sq` to the nearest cell of the track, on a
    /// map with `map`'s geometry.
    pub fn distance(&self, map: &HandMap, sq: Square) -> f32 {
        cells_distance(self.cells.iter(), map, sq)
    }

    /// The cells of the track's far end: those within a square of its deepest reach from its
    /// player's edge (White's at the bottom of the map, Black's at the top), where the fingers
    /// are, not the arm.
    pub fn tip(&self, map: &HandMap) -> Vec<(usize, usize)> {
        let depth = |&(row, _): &(usize, usize)| if self.hand.side == Color::White { map.side.saturating_sub(row + 1) } else { row };
        let deepest = self.cells.iter().map(depth).max().unwrap_or(0);
        self.cells.iter().copied().filter(|c| depth(c) + map.cells_per_square >= deepest).collect()
    }
}

/// The distance, in squares, from the centre of `sq` to the nearest of `cells` on a map with
/// `map`'s geometry (infinite for none).
pub fn cells_distance<'a>(cells: impl Iterator<Item = &'a (usize, usize)>, map: &HandMap, sq: Square) -> f32 {
    let (rows, cols) = map.cells(sq);
    let n = map.cells_per_square.max(1) as f32;
    let (r, c) = ((rows.start + rows.end) as f32 / 2.0, (cols.start + cols.end) as f32 / 2.0);
    cells
        .map(|&(row, col)| {
            let (dr, dc) = (row as f32 + 0.5 - r, col as f32 + 0.5 - c);
            (dr * dr + dc * dc).sqrt() / n
        })
        .fold(f32::INFINITY, f32::min)
}

/// A hand that left the board: no blob over the playing area any more.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Left {
    /// Which hand.
    pub hand: Hand,
    /// The last time it was seen over the board.
    pub t: f64,
}

/// When a track began and was last seen, and whether its number is in doubt.
#[derive(Clone, Copy, Debug)]
struct Birth {
    hand: Hand,
    t: f64,
    /// The latest reading that saw the track.
    seen: f64,
    /// It came with no other hand of its side in view and took another number than the side's
    /// last hand (where an arm crosses the edge is a weak witness of which hand it is, so this
    /// may be the same hand back), or it came beside another hand of its side with no arm, or
    /// with its arm across the same half of the edge as that hand's (a fragment of it, perhaps).
    doubtful: bool,
}

/// The live tracks.
#[derive(Clone, Debug, Default)]
pub struct Hands {
    tracks: Vec<Track>,
    births: Vec<Birth>,
    /// The number of each side's (Black's, White's) latest hand.
    last: [Option<u8>; 2],
}

impl Hands {
    /// The tracks alive now.
    pub fn tracks(&self) -> &[Track] {
        &self.tracks
    }

    /// Updates the tracks from the hand map of the reading at `t`; appends to `left` the hands
    /// that were over the board and no longer are.
    pub fn update(&mut self, map: &HandMap, t: f64, expected: Color, opts: &Options, left: &mut Vec<Left>) {
        let before: Vec<(Hand, bool, f64)> = self.tracks.iter().map(|tr| (tr.hand, tr.over_board, tr.seen)).collect();
        let [white, black] = blobs_by_side(map, &self.tracks, expected, opts);
        self.match_side(map, Color::White, white, t);
        self.match_side(map, Color::Black, black, t);
        for tr in self.tracks.iter().filter(|tr| tr.seen == t) {
            self.last[tr.hand.side as usize] = Some(tr.hand.number);
            if let Some(birth) = self.births.iter_mut().rfind(|b| b.hand == tr.hand) {
                birth.seen = t;
            }
        }
        // Events are dated back seconds, not minutes: a track unseen this long dates none.
        self.births.retain(|b| b.seen >= t - BIRTHS_KEPT_S);
        // Tracks unseen for too long are dropped.
        self.tracks.retain(|tr| t - tr.seen <= opts.hand_lost_s);
        for (hand, over, seen) in before {
            let now = self.tracks.iter().find(|tr| tr.hand == hand);
            // Dropped, or seen now away from the playing area.
            let gone = now.is_none_or(|tr| tr.seen == t && !tr.over_board);
            if over && gone {
                left.push(Left { hand, t: seen });
            }
        }
    }

    /// Whether the number of `hand` was in doubt at `t` (see [`Birth::doubtful`]): a track
    /// that carried that id about then began alone, with another number than its side's last
    /// hand. "About": events are dated back to the readings that showed them, by up to a second,
    /// and a hand's leaving comes a grace after it was last seen (within [`DOUBT_AFTER_S`]).
    pub fn doubtful(&self, hand: Hand, t: f64) -> bool {
        self.births.iter().any(|b| b.hand == hand && b.doubtful && b.t - 1.0 <= t && t <= b.seen + DOUBT_AFTER_S)
    }

    /// The track of any side nearest to `sq` (distance in squares), seen over the board in the
    /// latest reading (a track kept alive through a missed reading has no place to be near).
    pub fn nearest(&self, map: &HandMap, sq: Square) -> Option<(Hand, f32)> {
        let latest = self.tracks.iter().map(|tr| tr.seen).fold(f64::NEG_INFINITY, f64::max);
        self.tracks
            .iter()
            .filter(|tr| tr.over_board && tr.seen == latest)
            .map(|tr| (tr.hand, tr.distance(map, sq)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// The track of `side` already matched in this reading (`taken`) that lies within `reach`
    /// cells of `cells`.
    fn fragment_of(&self, side: Color, cells: &[(usize, usize)], taken: &[bool], reach: usize) -> Option<usize> {
        let gap = |tr: &Track| {
            tr.cells
                .iter()
                .flat_map(|&(r, c)| cells.iter().map(move |&(r2, c2)| r.abs_diff(r2).max(c.abs_diff(c2))))
                .min()
                .unwrap_or(usize::MAX)
        };
        (0..self.tracks.len())
            .filter(|&i| taken[i] && self.tracks[i].hand.side == side)
            .map(|i| (i, gap(&self.tracks[i])))
            .filter(|&(_, g)| g <= reach)
            .min_by_key(|&(_, g)| g)
            .map(|(i, _)| i)
    }

    fn match_side(&mut self, map: &HandMap, side: Color, mut blobs: Vec<Vec<(usize, usize)>>, t: f64) {
        // The blobs that continue a track first, so a new one is alone only when no hand of its
        // side is seen in this reading, whatever order the blobs came in.
        blobs.sort_by_cached_key(|cells| std::cmp::Reverse(self.tracks.iter().filter(|tr| tr.hand.side == side).map(|tr| tr.overlap(cells)).max().unwrap_or(0)));
        let mut taken = vec![false; self.tracks.len()];
        for cells in blobs {
            let centre = centroid(&cells);
            let arm = arm_number(map, side, &cells);
            let best = self
                .tracks
                .iter()
                .enumerate()
                .filter(|(i, tr)| tr.hand.side == side && !taken[*i])
                // An arm from the other half of the edge is the other hand, unless it covers
                // cells the hand covered (a hand resting by the edge, moving back in).
                .filter(|(_, tr)| arm.is_none() || tr.arm.is_none() || tr.arm == arm || (!tr.over_board && tr.overlap(&cells) > 0))
                .map(|(i, tr)| {
                    let overlap = tr.overlap(&cells);
                    let dist = distance(centroid(&tr.cells), centre);
                    (i, overlap, dist)
                })
                // Within two squares; four for an arm from the same half of the edge (a hand
                // coming in fast is seen first at the edge, then far over the board).
                .filter(|&(i, overlap, dist)| {
                    let reach = if arm.is_some() && self.tracks[i].arm == arm { 4.0 } else { 2.0 };
                    overlap > 0 || dist <= reach * map.cells_per_square as f32
                })
                .max_by(|a, b| a.1.cmp(&b.1).then(b.2.total_cmp(&a.2)));
            let over_board = cells.iter().any(|&(r, c)| map.square_at(r, c).is_some());
            match best {
                Some((i, _, _)) => {
                    taken[i] = true;
                    let tr = &mut self.tracks[i];
                    tr.cells = cells;
                    tr.over_board = over_board;
                    tr.seen = t;
                    tr.arm = arm.or(tr.arm);
                }
                None if let Some(i) = self.fragment_of(side, &cells, &taken, if arm.is_none() { ARMLESS_GAP } else { FRAGMENT_GAP }) => {
                    // A piece of a hand already matched (an arm cut at the wrist): the same hand.
                    let tr = &mut self.tracks[i];
                    tr.cells.extend(cells);
                    tr.cells.sort_unstable();
                    tr.over_board |= over_board;
                }
                None => {
                    let live: Vec<u8> = self.tracks.iter().filter(|tr| tr.hand.side == side).map(|tr| tr.hand.number).collect();
                    let number = [arm.unwrap_or(1), if arm == Some(2) { 1 } else { 2 }].into_iter().find(|n| !live.contains(n));
                    match number {
                        Some(number) => {
                            let hand = Hand { side, number };
                            // No other hand of its side seen in this reading (one kept alive
                            // through a missed reading may be this one, moved fast).
                            let alone = !self.tracks.iter().any(|tr| tr.hand.side == side && tr.seen == t);
                            let back = alone && self.last[side as usize].is_some_and(|last| last != number);
                            // Beside another hand of its side, its number is sure only where its
                            // own arm says it: a blob whose arm crosses the same half of the edge
                            // as that hand's, or with no arm, is as likely a fragment of it.
                            let unarmed = !alone && arm != Some(number);
                            let doubtful = back || unarmed;
                            self.births.push(Birth { hand, t, seen: t, doubtful });
                            self.tracks.push(Track { hand, cells, over_board, seen: t, arm });
                            taken.push(true);
                        }
                        None => {
                            // A third blob of one side: part of the nearest hand of that side.
                            if let Some(tr) = self
                                .tracks
                                .iter_mut()
                                .filter(|tr| tr.hand.side == side)
                                .min_by(|a, b| distance(centroid(&a.cells), centre).total_cmp(&distance(centroid(&b.cells), centre)))
                            {
                                tr.cells.extend(cells);
                                tr.cells.sort_unstable();
                                tr.over_board |= over_board;
                                tr.seen = t;
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The number of a new hand from where its arm crosses its player's edge: 1 for the right hand,
/// 2 for the left; `None` when no cell of the blob lies in that margin.
fn arm_number(map: &HandMap, side: Color, cells: &[(usize, usize)]) -> Option<u8> {
    let edge: Vec<f32> = cells
        .iter()
        .filter(|&&(r, _)| match side {
            Color::White => r + map.margin >= map.side,
            Color::Black => r < map.margin,
        })
        .map(|&(_, c)| c as f32 + 0.5)
        .collect();
    if edge.is_empty() {
        return None;
    }
    let centre = map.side as f32 / 2.0;
    let right_of_centre = 2 * edge.iter().filter(|&&c| c > centre).count() > edge.len();
    // White looks up the board (its right is the h-file side), Black down it.
    let right = right_of_centre == (side == Color::White);
    Some(if right { 1 } else { 2 })
}

/// The hands of each side (White's, Black's): blobs of the map of any hand, each given to the
/// player whose edge its arm crosses, White's at the bottom, Black's at the top (the edge whose
/// margin the blob covers most). A blob over a side edge, or over no edge (a palm whose arm the
/// model missed), stays with the track it overlaps; a new one over a side edge is the `expected`
/// player's (either player can reach from there); a blob that reaches both players' edges, or a
/// new one that reaches none, goes to the side whose map is stronger over it. The model's own
/// split between the two maps is least sure on a palm far from its player's edge, where the arm
/// is the better witness.
fn blobs_by_side(map: &HandMap, tracks: &[Track], expected: Color, opts: &Options) -> [Vec<Vec<(usize, usize)>>; 2] {
    let any: Vec<f32> = map.white.iter().zip(&map.black).map(|(w, b)| w.max(*b)).collect();
    let mut sides = [Vec::new(), Vec::new()];
    for cells in blobs(&any, map.side, opts) {
        // The arm comes in where the blob crosses the margin most: a palm reaching the far
        // rank from over a side edge touches that rank's margin too.
        let count = |f: &dyn Fn(usize, usize) -> bool| cells.iter().filter(|&&(r, c)| f(r, c)).count();
        let bottom = count(&|r, _| r + map.margin >= map.side);
        let top = count(&|r, _| r < map.margin);
        let side = count(&|_, c| c < map.margin || c + map.margin >= map.side);
        let overlapped = || {
            tracks
                .iter()
                .map(|tr| (tr.hand.side, tr.overlap(&cells)))
                .filter(|&(_, n)| n > 0)
                .max_by_key(|&(_, n)| n)
                .map(|(side, _)| side == Color::White)
        };
        let mass = || {
            let mass = |m: &[f32]| cells.iter().map(|&(r, c)| m[r * map.side + c]).filter(|p| !p.is_nan()).sum::<f32>();
            mass(&map.white) >= mass(&map.black)
        };
        // A hand that was over the board in the last reading and covers most of this blob: a
        // palm that reached the far rank stays its player's, though it crosses the opponent's
        // margin and its arm is lost (a promotion, a capture on the last rank).
        let continued = || {
            let latest = tracks.iter().map(|tr| tr.seen).fold(f64::NEG_INFINITY, f64::max);
            tracks
                .iter()
                .find(|tr| tr.seen == latest && tr.over_board && 2 * tr.overlap(&cells) >= cells.len())
                .map(|tr| tr.hand.side == Color::White)
        };
        let white = if bottom > 0 && top > 0 {
            mass()
        } else if let Some(white) = continued().filter(|&white| if white { bottom == 0 && top > 0 } else { top == 0 && bottom > 0 }) {
            white
        } else if bottom.max(top) > side {
            bottom > 0
        } else if side > 0 {
            // Over the a- or h-file edge: either player could reach from there.
            overlapped().unwrap_or(expected == Color::White)
        } else {
            // No arm in any margin (the model lost it): a hand seen before keeps its side; a
            // new one came in over the nearest edge, and from a side edge it is the expected
            // player's; halfway between edges, the stronger map says.
            overlapped().unwrap_or_else(|| match nearest_edge(&cells, map) {
                Some(Edge::Bottom) => true,
                Some(Edge::Top) => false,
                Some(Edge::Side) => expected == Color::White,
                None => mass(),
            })
        };
        sides[usize::from(!white)].push(cells);
    }
    sides
}

/// An edge of the board a hand's arm can cross.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Edge {
    /// White's (the bottom of the warp).
    Bottom,
    /// Black's (the top).
    Top,
    /// The a- or h-file edge.
    Side,
}

/// The edge of `map` closest to a blob of `cells`, if it is closer than the others by at least
/// a square; `None` when two are about as close (a palm in the middle of the board).
fn nearest_edge(cells: &[(usize, usize)], map: &HandMap) -> Option<Edge> {
    let far = map.side - 1;
    let closest = |d: &dyn Fn(usize, usize) -> usize| cells.iter().map(|&(r, c)| d(r, c)).min().unwrap_or(usize::MAX);
    let mut edges = [(closest(&|r, _| far - r), Edge::Bottom), (closest(&|r, _| r), Edge::Top), (closest(&|_, c| c.min(far - c)), Edge::Side)];
    edges.sort_by_key(|&(d, _)| d);
    (edges[1].0 >= edges[0].0 + map.cells_per_square).then_some(edges[0].1)
}

/// The 4-connected components of a map grown from cells at or above `Options::hand_min` over
/// cells at or above `Options::hand_grow`, largest first, each of at least
/// `Options::hand_min_cells` cells.
fn blobs(probs: &[f32], n: usize, opts: &Options) -> Vec<Vec<(usize, usize)>> {
    if n == 0 || probs.len() < n * n {
        return Vec::new();
    }
    let mut seen = vec![false; n * n];
    let mut out = Vec::new();
    for start in 0..n * n {
        if seen[start] || probs[start].is_nan() || probs[start] < opts.hand_min {
            continue;
        }
        seen[start] = true;
        let mut stack = vec![start];
        let mut cells = Vec::new();
        while let Some(i) = stack.pop() {
            let (r, c) = (i / n, i % n);
            cells.push((r, c));
            let mut visit = |j: usize| {
                if !seen[j] && probs[j] >= opts.hand_grow {
                    seen[j] = true;
                    stack.push(j);
                }
            };
            if r > 0 {
                visit(i - n);
            }
            if r + 1 < n {
                visit(i + n);
            }
            if c > 0 {
                visit(i - 1);
            }
            if c + 1 < n {
                visit(i + 1);
            }
        }
        if cells.len() >= opts.hand_min_cells {
            cells.sort_unstable();
            out.push(cells);
        }
    }
    out.sort_by_key(|b| std::cmp::Reverse(b.len()));
    out
}

fn centroid(cells: &[(usize, usize)]) -> (f32, f32) {
    let n = cells.len().max(1) as f32;
    let (r, c) = cells.iter().fold((0.0, 0.0), |(r, c), &(row, col)| (r + row as f32, c + col as f32));
    (r / n, c / n)
}

fn distance(a: (f32, f32), b: (f32, f32)) -> f32 {
    ((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2)).sqrt()
}
