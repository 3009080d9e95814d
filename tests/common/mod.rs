//! Readings derived from the labels of a fixture clip (`fixtures/clips/*/labels.json`), as the
//! board model might give them, for testing the tracker while the model is being trained.
//!
//! The derivation, frame by frame, with seeded noise (xorshift, seeded from the clip's seed):
//! - Classes: an uncovered square reads its labelled content with 0.7-0.9, the rest spread at
//!   random over the other classes; 2 % of readings are a blur that puts 0.6 on a wrong class.
//!   A square more than half covered (labelled `covered` > 0.5) reads garbage: a random class
//!   with 0.3-0.7. A toppled piece reads its class with 0.4 and empty with 0.3 (not
//!   recognisable). A held piece is on no square, as in the labels.
//! - Cover: the labelled fraction plus noise of up to 0.08 either way.
//! - Contact: 0.75-0.95 on labelled contact squares, missed (0.2) on 10 % of frames; elsewhere
//!   up to 0.3 near a hand (covered > 0.1) and up to 0.05 away from hands.
//! - Hand map: the labels say which hand holds what but not where each hand is, and `covered`
//!   is the camera's projection (an arm raised over the board covers squares far from the
//!   fingers). So each hand is placed from the script: at the square of each of its events
//!   with a square, from 10 frames before to 14 after, moving in a straight line between
//!   events of one visit (events less than 40 frames apart). It is a disc of radius 2.5 cells
//!   with an arm, 3 cells wide, to its player's edge (White's at the bottom, Black's at the
//!   top) at the shoulder: 1.5 squares in from the player's right corner for the right hand,
//!   from the left corner for the left hand (the labels give each hand's anatomical side).
//!   Hand cells read 0.75-0.95 for the owner's colour, the rest 0-0.15.
//! - Frames: as labelled (20 fps), except that frames with no hand present, after one with
//!   none, are dropped half the time, as the motion gate drops still frames.

use shakmaty::{Color, File, Piece, Rank, Square};
use touchmove::detect::reading::{CLASSES, piece_class};
use touchmove::detect::{HandMap, Reading, SquareReading};

const SIDE: usize = 54;
const CELLS: usize = 6;
const MARGIN: usize = 3;

/// Deterministic noise.
pub struct XorShift(u64);

impl XorShift {
    pub fn new(seed: u64) -> XorShift {
        XorShift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// Uniform in 0..1.
    pub fn unit(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }

    fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.unit()
    }

    fn below(&mut self, n: usize) -> usize {
        ((self.unit() * n as f32) as usize).min(n - 1)
    }
}

/// A scripted hand: owner, anatomical side, and where its events put it.
struct ScriptHand {
    side: Color,
    right: bool,
    /// (frame, x, y) in squares from a1's outer corner (x along the files, y along the ranks).
    stops: Vec<(i64, f32, f32)>,
}

impl ScriptHand {
    /// Where the hand is at `frame`, if it is over the board.
    fn at(&self, frame: i64) -> Option<(f32, f32)> {
        for w in self.stops.windows(2) {
            let ((f0, x0, y0), (f1, x1, y1)) = (w[0], w[1]);
            if f1 - f0 <= 40 && frame >= f0 && frame <= f1 {
                let k = (frame - f0) as f32 / (f1 - f0).max(1) as f32;
                return Some((x0 + k * (x1 - x0), y0 + k * (y1 - y0)));
            }
        }
        self.stops.iter().find(|&&(f, _, _)| frame >= f - 10 && frame <= f + 14).map(|&(_, x, y)| (x, y))
    }

    /// The shoulder, in the same units (outside the playing area).
    fn shoulder(&self) -> (f32, f32) {
        match (self.side, self.right) {
            (Color::White, true) => (6.5, -0.5),
            (Color::White, false) => (1.5, -0.5),
            (Color::Black, true) => (1.5, 8.5),
            (Color::Black, false) => (6.5, 8.5),
        }
    }
}

fn square_of(name: &str) -> Square {
    name.parse().unwrap_or_else(|_| panic!("bad square {name:?} in labels"))
}

/// The readings of a clip, from its labels.
pub fn readings(labels: &serde_json::Value) -> Vec<Reading> {
    let mut rng = XorShift::new(labels["seed"].as_u64().unwrap_or(1));
    let mut hands: Vec<ScriptHand> = labels["hands"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(id, h)| {
            let side = if h["owner"] == "w" { Color::White } else { Color::Black };
            let right = h["side"] == "right";
            let stops = labels["events"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|e| e["hand"] == id.as_str())
                .filter_map(|e| {
                    let sq = square_of(e["sq"].as_str()?);
                    Some((e["frame"].as_i64()?, u32::from(sq.file()) as f32 + 0.5, u32::from(sq.rank()) as f32 + 0.5))
                })
                .collect();
            ScriptHand { side, right, stops }
        })
        .collect();
    hands.sort_by_key(|h| h.stops.first().map_or(0, |s| s.0));
    let mut out = Vec::new();
    let mut still_before = false;
    for frame in labels["frames"].as_array().unwrap() {
        let n = frame["frame"].as_i64().unwrap();
        let present: Vec<(&ScriptHand, (f32, f32))> = hands.iter().filter_map(|h| h.at(n).map(|p| (h, p))).collect();
        let still = present.is_empty();
        if still && still_before && rng.unit() < 0.5 {
            continue;
        }
        still_before = still;
        out.push(reading(frame, &present, &mut rng));
    }
    out
}

fn reading(frame: &serde_json::Value, present: &[(&ScriptHand, (f32, f32))], rng: &mut XorShift) -> Reading {
    let pieces: Vec<char> = frame["pieces"].as_str().unwrap().chars().collect();
    let covered = frame["covered"].as_object().unwrap();
    let contact: Vec<Square> = frame["contact"].as_array().unwrap().iter().map(|s| square_of(s.as_str().unwrap())).collect();
    let toppled: Vec<Square> = frame["toppled"].as_array().unwrap().iter().map(|s| square_of(s.as_str().unwrap())).collect();
    let blank = SquareReading { classes: [0.0; CLASSES], cover: 0.0, contact: 0.0 };
    let mut squares = [blank; 64];
    for (i, &c) in pieces.iter().enumerate().take(64) {
        let sq = Square::from_coords(File::new((i % 8) as u32), Rank::new(7 - (i / 8) as u32));
        let truth = piece_class(Piece::from_char(c));
        let cover_true = covered.get(&sq.to_string()).and_then(|v| v.as_f64()).unwrap_or(0.0) as f32;
        let (class, p) = if cover_true > 0.5 {
            (rng.below(CLASSES), rng.range(0.3, 0.7))
        } else if toppled.contains(&sq) {
            (truth, 0.4)
        } else if rng.unit() < 0.02 {
            ((truth + 1 + rng.below(CLASSES - 1)) % CLASSES, 0.6)
        } else {
            (truth, rng.range(0.7, 0.9))
        };
        let r = &mut squares[sq as usize];
        spread(&mut r.classes, class, p, rng);
        if toppled.contains(&sq) && cover_true <= 0.5 {
            // Not recognisable: some of the rest on empty.
            let moved = 0.3 - r.classes[0].min(0.3);
            r.classes[0] += moved;
            let others: f32 = r.classes.iter().enumerate().filter(|&(k, _)| k != 0 && k != class).map(|(_, v)| v).sum();
            for (k, v) in r.classes.iter_mut().enumerate() {
                if k != 0 && k != class && others > 0.0 {
                    *v -= moved * *v / others;
                }
            }
        }
        r.cover = (cover_true + rng.range(-0.08, 0.08)).clamp(0.0, 1.0);
        r.contact = if contact.contains(&sq) {
            if rng.unit() < 0.1 { 0.2 } else { rng.range(0.75, 0.95) }
        } else if cover_true > 0.1 {
            rng.range(0.0, 0.3)
        } else {
            rng.range(0.0, 0.05)
        };
    }
    let mut white = vec![0.0f32; SIDE * SIDE];
    let mut black = vec![0.0f32; SIDE * SIDE];
    for map in [&mut white, &mut black] {
        for v in map.iter_mut() {
            *v = rng.range(0.0, 0.15);
        }
    }
    for &(hand, (x, y)) in present {
        let map = if hand.side == Color::White { &mut white } else { &mut black };
        let (sx, sy) = hand.shoulder();
        for row in 0..SIDE {
            for col in 0..SIDE {
                // Cell centre in squares from a1's outer corner.
                let cx = (col as f32 + 0.5 - MARGIN as f32) / CELLS as f32;
                let cy = 8.0 - (row as f32 + 0.5 - MARGIN as f32) / CELLS as f32;
                let in_disc = ((cx - x).powi(2) + (cy - y).powi(2)).sqrt() * CELLS as f32 <= 2.5;
                let in_arm = segment_distance((cx, cy), (x, y), (sx, sy)) * CELLS as f32 <= 1.5;
                if in_disc || in_arm {
                    map[row * SIDE + col] = rng.range(0.75, 0.95);
                }
            }
        }
    }
    Reading {
        frame: frame["frame"].as_u64().unwrap(),
        t: frame["t"].as_f64().unwrap(),
        squares,
        hands: HandMap { side: SIDE, cells_per_square: CELLS, margin: MARGIN, white, black },
    }
}

/// `p` on `class`, the rest spread at random over the others.
fn spread(classes: &mut [f32; CLASSES], class: usize, p: f32, rng: &mut XorShift) {
    let weights: Vec<f32> = (0..CLASSES).map(|k| if k == class { 0.0 } else { rng.unit() + 0.01 }).collect();
    let total: f32 = weights.iter().sum();
    for k in 0..CLASSES {
        classes[k] = if k == class { p } else { (1.0 - p) * weights[k] / total };
    }
}

fn segment_distance(p: (f32, f32), a: (f32, f32), b: (f32, f32)) -> f32 {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let len2 = dx * dx + dy * dy;
    let k = if len2 > 0.0 { (((p.0 - a.0) * dx + (p.1 - a.1) * dy) / len2).clamp(0.0, 1.0) } else { 0.0 };
    ((p.0 - a.0 - k * dx).powi(2) + (p.1 - a.1 - k * dy).powi(2)).sqrt()
}
