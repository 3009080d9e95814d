//! The stable board: per square, the piece the tracker believes stands there.
//!
//! A square's reading is trusted only while a hand covers less than [`Options::cover_max`] of
//! it: under a hand the class is unreliable and the reading is skipped (it neither confirms nor
//! contradicts). What changes a square is its kind, empty / White / Black, which the model reads
//! far more reliably than piece kinds (a piece's kind is known from where it came from): the
//! stable content changes only when [`Options::hold`] trusted readings in a row show the same
//! other kind with at least [`Options::change_min`] (hysteresis in time and in confidence: the
//! stable kind is confirmed from [`Options::class_min`]), so a shadow, a blurred frame or a
//! square the model is unsure of does not flip. A change is dated back to when the hand
//! did it: between the last reading that confirmed the old piece and the first that showed the
//! new one. A piece leaving left a moment ([`LIFT_LEAD_S`]) before the hand's last grasp of it
//! (the last reading of at least [`Options::grasp_min`] contact, lasting through the frames the
//! gate passed over after it; one trusted reading of the piece, still in the hand over its
//! square, does not end it), or else with the hand last seen near the square. A piece
//! arriving under a hand was let go while the fingers were on it: at the weighted mean time of
//! the contact read there, frame by frame (a frame the gate passed over as the reading before
//! it), since the square last read empty (the hand arrives, sets the piece
//! down, lets go and withdraws; the contact read is weak while the hand comes and goes, and from
//! above it stays up while the hand hovers, so its last reading is the withdrawal, not the
//! release). The hand is the one seen there then (for a piece leaving with no hand seen near,
//! the nearest hand over the board: pieces leave in a hand, while one seen arriving with no
//! hand near is a misread). A piece that trusted
//! readings, [`Options::knock_hold`] in a row, no longer recognise as any kind
//! (best class under [`Options::knock_class_max`]) while the square clearly looks occupied, was
//! displaced or toppled: a knock. Only a piece the readings have recognised since it came there
//! stops looking like itself: one never recognised from the first reading on is a piece whose
//! look the model does not know, and its readings confirm it as they are. A piece read surely
//! but in no sure colour (a dark set, a grid a little off) on a square a piece left, with no
//! hand near the square since, is that piece again, in its colour: pieces move only in hands.
//! A piece read on an empty square through the hand over it, for a moment and never clearly
//! enough to change it, the square then read empty and uncovered, is reported as a glimpse:
//! the interpreter decides whether a held piece was set down there and taken up again.
//!
//! The interpreter corrects the stable board ([`Squares::correct`]) where the readings got it
//! wrong: a piece misread in place (turned the other colour while no hand held one) is put
//! back, and a piece set down where the readings cannot see it (cut off at the picture's edge)
//! is taken as standing there, readings of an empty square confirming it, until the interpreter
//! sees it arrive elsewhere. To find where such a piece went, each square keeps the occupied
//! probability of its trusted readings of the last [`HISTORY_S`] seconds
//! ([`Squares::occupied`]).

use std::collections::VecDeque;

use shakmaty::{Board, Color, Piece, Role, Square};

use super::hands::Hands;
use super::{Options, set_content};
use super::interpret::Correction;
use crate::detect::{Reading, SquareReading};
use crate::detect::reading::{CLASSES, class_piece, piece_class};
use crate::events::Hand;

/// What the board readings show, dated and attributed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Seen {
    /// The stable content of `sq` changed.
    Change {
        /// The square.
        sq: Square,
        /// What stands there now.
        to: Option<Piece>,
        /// When it happened, as best the readings tell.
        t: f64,
        /// The hand seen at the square then.
        hand: Option<Hand>,
    },
    /// A piece was read on the empty square `sq` through the hand over it, from `first` to
    /// `last`, never clearly enough to change the square, and the square then read empty,
    /// uncovered: the piece may have been set down there and taken up again with the hand never
    /// off it.
    Glimpse {
        /// The square.
        sq: Square,
        /// The piece read there.
        piece: Piece,
        /// The first reading that showed it.
        first: f64,
        /// The last reading that showed it.
        last: f64,
        /// The hand seen at the square then.
        hand: Option<Hand>,
    },
    /// The piece on `sq` no longer looks like itself: displaced or toppled.
    Knock {
        /// The square.
        sq: Square,
        /// The first reading that showed it.
        t: f64,
        /// The hand seen at the square then.
        hand: Option<Hand>,
    },
}

/// A kind of content (empty, or a piece of a colour) that trusted readings in a row showed
/// instead of the stable one.
#[derive(Clone, Copy, Debug)]
struct Candidate {
    kind: Option<Color>,
    /// How many readings showed it.
    n: usize,
    /// When the first did.
    first: f64,
    /// Their class probabilities, summed: the piece's kind is read from all of them.
    classes: [f32; CLASSES],
}

/// How many times as likely as a queen a knight must read to be taken for an underpromotion
/// (see [`best_of_color`]).
const UNDERPROMOTION_ODDS: f32 = 10.0;

/// How many times as likely as a queen a rook or a bishop must read to be taken for an
/// underpromotion: ten times rarer in games than the knight's, and the cheaper mistake the
/// other way round (a queen makes every move of either, so a rook taken for a queen makes no
/// later move look illegal, while a queen taken for a rook makes its first diagonal move an
/// illegal move, 7.5.1).
const LONG_RANGE_UNDERPROMOTION_ODDS: f32 = 100.0;

/// A piece lifted leaves its square this long (seconds) before the last reading of the hand's
/// grasp on it (contact at [`Options::grasp_min`] or more): the hand holding it is still over
/// the square for a moment. The median over the lifts of the 42 rendered clips of
/// `render.touches` (seeds 50000-50041), printed by `training/fit_event_times.py`.
pub(super) const LIFT_LEAD_S: f64 = 0.17;

/// Seconds of trusted readings each square keeps (see [`Squares::occupied`]).
const HISTORY_S: f64 = 20.0;

/// A piece is glimpsed on an empty square in readings, with a hand near, where it has at least
/// this probability...
const GLIMPSE_MIN: f32 = 0.5;
/// ...and the hand covers less than this fraction of the square (more than a trusted reading
/// allows: the hand is still at the piece)...
const GLIMPSE_COVER_MAX: f32 = 0.5;
/// ...for at least this long (seconds, from the first reading that shows it to the first that
/// does not: frames the gate skipped showed what the last reading did), in two readings or
/// more, none more than [`GLIMPSE_GAP_S`] apart. In the rendered clips, no reading of a piece
/// in a hand over a square it never stood on passes these (five frames at 20 fps).
const GLIMPSE_S: f64 = 0.25;
/// Longest time, in seconds, between two readings of one glimpse.
const GLIMPSE_GAP_S: f64 = 1.0;

/// A time and the hand seen then.
type Sighting = Option<(f64, Option<Hand>)>;

/// Longest time, in seconds, a piece seen arriving waits for the hand still at it to go before
/// its arrival is dated (see [`Arriving`]): the events wait for it, so a hand resting by the
/// piece must not hold them back for long.
const ARRIVING_MAX_S: f64 = 2.0;

/// A piece seen standing on an empty square while the hand that brought it is still there: the
/// fingers may hold it yet (from above, a piece held by its top is seen on its square before
/// it is let go). Its arrival is dated once the hand has gone, from all the contact read.
#[derive(Clone, Copy, Debug)]
struct Arriving {
    piece: Piece,
    /// The first reading that showed it.
    first: f64,
    hand: Option<Hand>,
}

/// Readings of a piece on an empty square through a hand (see [`Seen::Glimpse`]).
#[derive(Clone, Copy, Debug)]
struct Glimpse {
    piece: Piece,
    /// How many readings showed it.
    n: usize,
    first: f64,
    last: f64,
    /// The first reading since `last` that did not show it.
    until: Option<f64>,
    hand: Option<Hand>,
}

#[derive(Clone, Copy, Debug, Default)]
struct SquareState {
    /// The kind being considered instead of the stable one.
    candidate: Option<Candidate>,
    /// Trusted readings in a row that recognise no class well, and when the first came.
    doubt: Option<(usize, f64)>,
    knocked: bool,
    /// The readings have recognised the stable piece (its kind read clearly) since it came there,
    /// or saw it come: only such a piece can be found knocked.
    recognised: bool,
    /// The piece that last left the square (the square empty since).
    left: Option<Piece>,
    /// The last reading that confirmed the stable content.
    confirmed: f64,
    /// The last time the stable content changed.
    changed: f64,
    last_contact: Sighting,
    /// The last reading with at least [`Options::grasp_min`] contact.
    last_grasp: Sighting,
    /// Trusted readings of the stable content since `last_grasp` (see [`SquareState::seen`]).
    since_grasp: usize,
    /// The contact of the last reading.
    contact: f64,
    /// The frames' contact since the last confirmation, summed, and summed times their time:
    /// where a piece was set down, the fingers were on it about their weighted mean.
    contact_sum: f64,
    contact_moment: f64,
    first_near: Sighting,
    last_near: Sighting,
    /// The stable piece stands where the readings cannot see it (see [`Squares::correct`]).
    unseen: bool,
    /// A piece being glimpsed on the square, empty in the stable board.
    glimpse: Option<Glimpse>,
    /// The stable piece, seen arriving, its hand still at it: not reported yet.
    arriving: Option<Arriving>,
}

/// The stable board and the evidence behind it.
#[derive(Clone, Debug)]
pub struct Squares {
    board: Board,
    state: [SquareState; 64],
    /// Per square, the time and occupied probability of its trusted readings of the last
    /// [`HISTORY_S`] seconds.
    history: Vec<VecDeque<(f64, f32)>>,
    /// The time and frame of the last reading.
    last: Option<(f64, u64)>,
}

impl Squares {
    /// Starts from `board`, taken as confirmed at time 0.
    pub fn new(board: Board) -> Squares {
        let fresh = SquareState { changed: f64::NEG_INFINITY, ..SquareState::default() };
        Squares { board, state: [fresh; 64], history: vec![VecDeque::new(); 64], last: None }
    }

    /// The stable board.
    pub fn board(&self) -> &Board {
        &self.board
    }

    /// The earliest time a change not yet seen could still be dated to: no square has gone
    /// unconfirmed since before it.
    pub fn settled(&self) -> f64 {
        self.state.iter().map(|s| s.glimpse.map_or(s.confirmed, |g| g.first.min(s.confirmed))).fold(f64::INFINITY, f64::min)
    }

    /// The last reading that confirmed the content of `sq`.
    pub fn confirmed(&self, sq: Square) -> f64 {
        self.state[sq as usize].confirmed
    }

    /// The last time the stable content of `sq` changed.
    pub fn changed(&self, sq: Square) -> f64 {
        self.state[sq as usize].changed
    }

    /// The median occupied probability of the trusted readings of `sq` dated in `from..to`
    /// (within the last [`HISTORY_S`] seconds); `None` if there were none.
    pub fn occupied(&self, sq: Square, from: f64, to: f64) -> Option<f32> {
        let mut ps: Vec<f32> = self.history[sq as usize].iter().filter(|(t, _)| (from..to).contains(t)).map(|&(_, p)| p).collect();
        if ps.is_empty() {
            return None;
        }
        let mid = ps.len() / 2;
        Some(*ps.select_nth_unstable_by(mid, f32::total_cmp).1)
    }

    /// Takes the interpreter's word for the content of a square (as of `now`, the latest
    /// reading): a piece the readings misread in place, or one set down out of sight, which the
    /// readings of an empty square then confirm, or gone from there.
    pub fn correct(&mut self, c: Correction, now: f64) {
        // A piece seen arriving there since, not reported yet, is newer than the word.
        if self.state[c.sq as usize].arriving.is_some() {
            return;
        }
        set_content(&mut self.board, c.sq, c.piece);
        let st = &mut self.state[c.sq as usize];
        st.candidate = None;
        st.doubt = None;
        st.glimpse = None;
        st.unseen = c.out_of_sight;
        st.left = None;
        st.recognised = true;
        st.changed = st.changed.max(c.t);
        st.confirm(now);
    }

    /// Ends the input: the pieces still arriving (their hand never left) are reported.
    pub fn finish(&mut self, out: &mut Vec<Seen>) {
        for sq in Square::ALL {
            let st = &mut self.state[sq as usize];
            let now = st.confirmed.max(st.arriving.map_or(f64::NEG_INFINITY, |a| a.first));
            st.arrived(sq, f64::INFINITY, now, out);
        }
    }

    /// Takes in one reading; appends what changed to `out`.
    pub fn update(&mut self, reading: &Reading, hands: &Hands, opts: &Options, out: &mut Vec<Seen>) {
        let t = reading.t;
        // The frames between two readings are those the gate found unchanged: each showed what
        // the last reading (at `was`) did, up to the frame before this one. There are `skipped`
        // of them, at a mean time of `skipped_t`.
        let last = self.last.replace((t, reading.frame));
        let was = last.map(|(was, _)| was);
        let (unchanged_until, skipped, skipped_t) = match last {
            Some((was, frame)) if reading.frame > frame => {
                let step = (t - was) / (reading.frame - frame) as f64;
                (t - step, (reading.frame - frame - 1) as f64, (was + t) / 2.0)
            }
            _ => (t, 0.0, t),
        };
        for sq in Square::ALL {
            let r = reading.square(sq);
            let nearest = hands.nearest(&reading.hands, sq);
            let near = nearest.filter(|&(_, d)| d <= opts.near_squares).map(|(h, _)| h);
            let st = &mut self.state[sq as usize];
            if near.is_some() {
                st.first_near.get_or_insert((t, near));
                st.last_near = Some((t, near));
            }
            // Each frame counts once, those the gate passed over as the last reading had them.
            if skipped > 0.0 {
                st.contact_sum += st.contact * skipped;
                st.contact_moment += st.contact * skipped * skipped_t;
            }
            st.contact = if r.contact.is_finite() { f64::from(r.contact) } else { 0.0 };
            st.contact_sum += st.contact;
            st.contact_moment += st.contact * t;
            if r.contact >= opts.grasp_min {
                st.last_grasp = Some((t, nearest.map(|(h, _)| h)));
                st.since_grasp = 0;
            } else if let Some((at, _)) = &mut st.last_grasp
                && Some(*at) == was
            {
                // The grasp, read last time, lasted through the frames the gate passed over.
                *at = unchanged_until;
            }
            if r.contact >= opts.contact_min {
                let hand = nearest.map(|(h, _)| h);
                st.last_contact = Some((t, hand));
            }
            if st.arriving.is_some_and(|a| near.is_none() || t - a.first > ARRIVING_MAX_S) {
                st.arrived(sq, t, t, out);
            }
            let stable = self.board.piece_at(sq);
            if stable.is_none() {
                st.glimpse(sq, r, near, t, opts, out);
            }
            if r.cover.is_nan() || r.cover >= opts.cover_max {
                continue;
            }
            let history = &mut self.history[sq as usize];
            history.push_back((t, r.occupied()));
            while history.front().is_some_and(|&(at, _)| at < t - HISTORY_S) {
                history.pop_front();
            }
            // What a square holds is read as empty / White / Black: the model tells those apart
            // far better than piece kinds, and a piece's kind is known from where it came from.
            let (kind, p) = best_kind(r);
            // A piece read surely, in no sure colour, where one left with no hand near the
            // square since: pieces move only in hands, so it is that one, back (or never gone:
            // the readings lost it as an arm passed), in the colour it left in.
            let (kind, p) = match st.left {
                Some(piece) if stable.is_none() && st.first_near.is_none() && st.last_contact.is_none() && p < opts.change_min && r.occupied() >= opts.change_min => {
                    (Some(piece.color), r.occupied())
                }
                _ => (kind, p),
            };
            if st.unseen && kind.is_none() {
                st.candidate = None;
                st.confirm(t);
                continue;
            }
            let doubtful_kind = r.best().1 < opts.knock_class_max;
            if p < opts.class_min || (stable.is_some() && kind == kind_of(stable) && doubtful_kind) {
                st.candidate = None;
                if stable.is_some() && r.occupied() >= 0.8 && doubtful_kind {
                    if !st.recognised {
                        // Never recognised: this is how the model reads this piece.
                        st.confirm(t);
                        continue;
                    }
                    let (n, first) = st.doubt.map_or((1, t), |(n, first)| (n + 1, first));
                    st.doubt = Some((n, first));
                    if n >= opts.knock_hold && !st.knocked {
                        st.knocked = true;
                        let hand = st.last_contact.or(st.last_near).and_then(|s| s.1).or(near);
                        out.push(Seen::Knock { sq, t: first, hand });
                    }
                    if st.knocked {
                        st.confirmed = t;
                    }
                } else {
                    st.doubt = None;
                }
                if st.doubt.is_none() {
                    st.settle_unhandled(t);
                }
                continue;
            }
            st.doubt = None;
            if kind == kind_of(stable) {
                st.knocked = false;
                st.recognised = true;
                st.candidate = None;
                st.seen(t, opts.hold);
                continue;
            }
            // A piece of the other colour, or a piece on an empty square: its kind is the
            // model's best among that colour's (the interpreter prefers the piece a hand held).
            if p < opts.change_min {
                st.candidate = None;
                st.settle_unhandled(t);
                continue;
            }
            let mut candidate = match st.candidate {
                Some(c) if c.kind == kind => Candidate { n: c.n + 1, ..c },
                _ => Candidate { kind, n: 1, first: t, classes: [0.0; CLASSES] },
            };
            for (sum, p) in candidate.classes.iter_mut().zip(r.classes) {
                *sum += p;
            }
            st.candidate = Some(candidate);
            let Candidate { n, first, classes, .. } = candidate;
            if n < opts.hold {
                continue;
            }
            // A piece arriving and changing again with the hand still there: it stood there
            // until the change began.
            if st.arriving.is_some() {
                st.arrived(sq, first, t, out);
            }
            let class = kind.map(|color| best_of_color(&classes, color, sq, &self.board));
            // Leaving: the last grasp; arriving: the fingers' last touch before it was seen.
            let evidence = st.last_contact.or(st.last_near);
            let when = match class {
                // Arriving under a hand: let go while the fingers were on it, at the weighted
                // mean time of the contact read since the square last showed empty (the hand
                // sets the piece down, lets go and withdraws: the last contact read is the
                // withdrawal, the first the arrival).
                Some(_) if st.contact_sum > 0.0 => (st.contact_moment / st.contact_sum).min(first),
                Some(_) => evidence.map_or(first, |(at, _)| at.min(first)),
                // Leaving: it went a little before the hand's last grasp of it.
                None => st.last_grasp.map(|(at, _)| at - LIFT_LEAD_S).or(evidence.map(|(at, _)| at)).map_or(first, |at| at.min(first)),
            }
            .max(st.confirmed);
            // A piece leaving with no hand seen at it went with the nearest hand there is.
            let carrier = nearest.filter(|_| class.is_none()).map(|(h, _)| h);
            let hand = evidence.and_then(|s| s.1).or(near).or(carrier);
            set_content(&mut self.board, sq, class);
            st.candidate = None;
            st.glimpse = None;
            if let Some(piece) = class
                && stable.is_none()
                && near.is_some()
            {
                st.arriving = Some(Arriving { piece, first, hand });
                st.left = None;
                st.knocked = false;
                st.recognised = true;
                st.unseen = false;
                continue;
            }
            out.push(Seen::Change { sq, to: class, t: when, hand });
            st.left = if class.is_none() { stable } else { None };
            st.knocked = false;
            st.recognised = true;
            st.unseen = false;
            st.changed = when;
            st.confirm(t);
        }
    }
}

impl SquareState {
    /// Follows a glimpse of a piece on the square (empty in the stable board) through the
    /// reading `r`, `near` the hand at the square; reports it once a trusted reading shows the
    /// square clearly empty.
    fn glimpse(&mut self, sq: Square, r: &SquareReading, near: Option<Hand>, t: f64, opts: &Options, out: &mut Vec<Seen>) {
        if r.cover.is_nan() {
            return;
        }
        if let (Some(piece), p) = r.best()
            && p >= GLIMPSE_MIN
            && r.cover < GLIMPSE_COVER_MAX
            && near.is_some()
        {
            self.glimpse = match self.glimpse {
                Some(g) if g.piece == piece && t - g.last <= GLIMPSE_GAP_S => Some(Glimpse { n: g.n + 1, last: t, until: None, hand: g.hand.or(near), ..g }),
                _ => Some(Glimpse { piece, n: 1, first: t, last: t, until: None, hand: near }),
            };
            return;
        }
        let Some(g) = &mut self.glimpse else { return };
        let until = *g.until.get_or_insert(t);
        if r.cover < opts.cover_max && r.classes[0] >= opts.class_min {
            if r.classes[0] >= opts.change_min && g.n >= 2 && until - g.first >= GLIMPSE_S {
                out.push(Seen::Glimpse { sq, piece: g.piece, first: g.first, last: g.last, hand: g.hand });
            }
            self.glimpse = None;
        } else if t - g.last > GLIMPSE_GAP_S {
            self.glimpse = None;
        }
    }

    /// A reading neither confirmed nor changed the stable content. If no hand has come near
    /// since it was last confirmed, a change, if one comes, will be dated at a later reading
    /// (only a hand dates one back): nothing earlier is pending here, and the output need not
    /// wait for this square.
    fn settle_unhandled(&mut self, t: f64) {
        if self.first_near.is_none() && self.last_contact.is_none() {
            self.confirmed = t;
        }
    }

    /// The piece arriving (see [`Arriving`]) is reported, its hand gone at `now` (or its square
    /// changing again from `until`): let go at the weighted mean time of the contact read since
    /// the square last read empty, no later than `until`.
    fn arrived(&mut self, sq: Square, until: f64, now: f64, out: &mut Vec<Seen>) {
        let Some(Arriving { piece, first, hand }) = self.arriving.take() else { return };
        let mean = if self.contact_sum > 0.0 { self.contact_moment / self.contact_sum } else { first };
        let when = mean.min(until).max(self.confirmed);
        out.push(Seen::Change { sq, to: Some(piece), t: when, hand });
        self.changed = when;
        self.confirm(now);
    }

    /// A trusted reading showed the stable content. Right after the fingers held the piece, one
    /// such reading does not yet show that they left it there: a piece lifted is still over its
    /// square, in the hand, for a reading or two, and a lift read so was dated after it, a
    /// third of a second late. As for a change, `hold` readings settle it.
    fn seen(&mut self, t: f64, hold: usize) {
        if self.last_grasp.is_some() {
            self.since_grasp += 1;
            if self.since_grasp < hold {
                return;
            }
        }
        self.confirm(t);
    }

    /// A reading confirmed the stable content: what happened before it is settled. (Not while a
    /// piece arriving waits for its hand to go: its arrival is not dated yet.)
    fn confirm(&mut self, t: f64) {
        if self.arriving.is_some() {
            return;
        }
        self.confirmed = t;
        self.last_contact = None;
        self.last_grasp = None;
        self.contact_sum = 0.0;
        self.contact_moment = 0.0;
        self.first_near = None;
        self.last_near = None;
    }
}

/// Empty (`None`) or the colour of a piece.
fn kind_of(piece: Option<Piece>) -> Option<Color> {
    piece.map(|p| p.color)
}

/// The most likely of empty, a White piece, a Black piece, and its probability.
fn best_kind(r: &SquareReading) -> (Option<Color>, f32) {
    let (empty, white, black) = (r.classes[0], r.color(Color::White), r.color(Color::Black));
    if empty >= white && empty >= black {
        (None, empty)
    } else if white >= black {
        (Some(Color::White), white)
    } else {
        (Some(Color::Black), black)
    }
}

/// The most likely piece of `color` on `sq` given class probabilities `classes` (summed over
/// readings), among those that can stand there: no second king while `board` has that colour's
/// king elsewhere.
///
/// On the last rank of `color`'s pawns, a piece no hand held is a promotion piece (the
/// interpreter names a held piece by where it was lifted), and there the model is least sure of
/// kinds: it never saw a pawn there, and reads a queen as a rook or a king half the time. So it
/// is a queen, as almost every promotion is, unless a knight reads at least
/// [`UNDERPROMOTION_ODDS`] times as likely, or a rook or a bishop
/// [`LONG_RANGE_UNDERPROMOTION_ODDS`] times.
fn best_of_color(classes: &[f32; CLASSES], color: Color, sq: Square, board: &Board) -> Piece {
    let start = if color == Color::White { 1 } else { 7 };
    let possible = |role: Role| role != Role::King || board.king_of(color).is_none_or(|k| k == sq);
    let of = |role: Role| classes[piece_class(Some(Piece { color, role }))];
    if sq.rank() == color.other().backrank() {
        let odds = |role: Role| if role == Role::Knight { UNDERPROMOTION_ODDS } else { LONG_RANGE_UNDERPROMOTION_ODDS };
        let under = [Role::Knight, Role::Rook, Role::Bishop].into_iter().filter(|&role| of(role) >= odds(role) * of(Role::Queen)).max_by(|a, b| of(*a).total_cmp(&of(*b)));
        return Piece { color, role: under.unwrap_or(Role::Queen) };
    }
    (start..start + 6)
        .filter_map(|i| class_piece(i).map(|p| (p, classes[i])))
        .filter(|&(p, _)| possible(p.role))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map_or(Piece { color, role: Role::Queen }, |(p, _)| p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classes(probs: &[(char, f32)]) -> [f32; CLASSES] {
        let mut classes = [0.0; CLASSES];
        for &(c, p) in probs {
            classes[piece_class(Piece::from_char(c))] = p;
        }
        classes
    }

    #[test]
    fn a_piece_on_the_promotion_rank_is_a_queen_unless_another_reads_far_likelier() {
        let board: Board = "8/6k1/8/8/8/8/6K1/8".parse::<shakmaty::fen::Fen>().unwrap().as_setup().board.clone();
        let white = |probs: &[(char, f32)], sq| best_of_color(&classes(probs), Color::White, sq, &board).char();
        // A queen read as a rook (the rendered clips): a queen.
        assert_eq!(white(&[('R', 0.6), ('Q', 0.1)], Square::E8), 'Q');
        // A knight the model is sure of: an underpromotion.
        assert_eq!(white(&[('N', 0.9), ('Q', 0.05)], Square::E8), 'N');
        // A rook or a bishop must be far surer: a queen does every move either could.
        assert_eq!(white(&[('R', 0.9), ('Q', 0.05)], Square::E8), 'Q');
        assert_eq!(white(&[('B', 0.9), ('Q', 0.05)], Square::E8), 'Q');
        assert_eq!(white(&[('R', 0.99), ('Q', 0.005)], Square::E8), 'R');
        // The knight, where it reads sure enough, beside a likelier rook that does not.
        assert_eq!(white(&[('R', 0.6), ('N', 0.35), ('Q', 0.01)], Square::E8), 'N');
        // Anywhere else, the likeliest piece; never a second king.
        assert_eq!(white(&[('R', 0.89), ('Q', 0.07)], Square::E4), 'R');
        assert_eq!(white(&[('K', 0.6), ('Q', 0.3)], Square::E4), 'Q');
        // Black promotes on the first rank.
        assert_eq!(best_of_color(&classes(&[('r', 0.8), ('q', 0.1)]), Color::Black, Square::A1, &board).char(), 'q');
    }
}
