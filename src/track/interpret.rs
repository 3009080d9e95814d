//! From dated observations to the events of the contract, in time order.
//!
//! Observations arrive when the tracker is sure of them, which is later than when they
//! happened and not in order; they wait here until nothing earlier can still come, then are
//! read in time order against what each hand holds:
//! - a piece leaving its square is a `lift` by the hand seen there; the hand now holds it; a
//!   piece of the opponent's leaving in a hand is taken off the board as it goes (a `remove`
//!   from its square: a captured piece never comes back; one set down again is a `place`);
//! - a piece appearing is a `release` by the hand holding that piece (the hand seen there
//!   first, then any hand; a piece of the other colour in the hand seen there when no hand
//!   holds one of the colour read; with no hand seen there, a held piece of its colour that
//!   could go there, else the held piece lifted from there, whatever colour read; not a piece
//!   that could not go there, where only the other player's hand is seen), or else, on the
//!   last rank of its colour's pawns beside one lifted from (or still on) the rank before, a
//!   `place` of a promotion piece from off the board (elsewhere no piece comes from off the
//!   board: the hand itself, or its shadow, was read as a piece, or a piece standing there read
//!   in the other colour). Failing a holder, the one piece of its colour that could go there
//!   whose square's readings have turned from occupied towards empty, though not enough to
//!   change the stable board (a grid a little off, a shadow), was lifted from there: a `lift`
//!   with [`UNSEEN_CONF`] and the `release`, at once, or when a hand leaves or a piece is
//!   lifted and the readings since tell (dated when the piece appeared, as far as the events
//!   already out allow);
//! - a pawn released on the last rank waits there to be exchanged; if it is not lifted again
//!   before its hand leaves the board or the opponent acts, it was exchanged where the readings
//!   could not tell (in the hand, or under it): a `remove` from the square and a `place` of the
//!   piece read there;
//! - a piece turning the other colour in place while no hand holds one of that colour (or,
//!   with no hand seen there, none that could take it), or appearing where no hand was seen
//!   and no held piece could go, is a misread, and nothing happened;
//! - a piece seen gone from its square and back, in its colour, within [`SHADOW_S`] never
//!   left: no hand lifts a piece and sets it down again that fast, while an arm's shadow or
//!   edge passing over it is read so (the events wait that long for the readings to tell);
//! - a piece seen leaving while another of its colour leaves too (castling's king and rook
//!   apart) never left if its player then sets down the other where only the other could go:
//!   a player moves one piece at a time, and the readings lose pieces in an arm's shadow (the
//!   events wait, a few seconds at most, until the readings tell);
//! - a player's own piece still in a hand when the opponent lifts a piece of theirs, or when
//!   the hand leaves the board, or any held piece when a piece of the other colour that it
//!   could not capture is lifted (whatever side the hands were given: one person may play
//!   both sides, an arm may come over a side edge), or another of its own colour, not its
//!   castling partner (one piece at a time), was set down where the readings could not
//!   see it (cut off at the picture's edge): on the square, among those it could go to, whose
//!   readings have turned most towards a piece since it was lifted, if any has clearly; a
//!   `release` there with [`UNSEEN_CONF`]; the piece stays there, whatever the readings show,
//!   until a piece of its colour appears where no held piece but it could go: a `lift` from its
//!   square and a `release` there; or until a hand leaves with an opponent's piece it lifted,
//!   its square reading more occupied than not since, and it is the one such piece that could
//!   go there: it captured (a `lift` and a `release`, with [`UNSEEN_CONF`]);
//! - a held piece that the readings glimpse through the hand still over it (see
//!   `Squares`), on a square it could go to that then reads empty, was set down there and
//!   taken up again: a `release` and a `lift` there with [`GLIMPSE_CONF`], so a move changed
//!   after it is left to the arbiter (4.7);
//! - a hand leaving the board with pieces of its player's in it (not found set down out of
//!   sight) put them aside: one `remove` (no square) each;
//! - a touch of a standing piece is a `touch`, or a `contact` when the hand holds a piece, or
//!   a `brush` when it was a graze on the way elsewhere;
//! - a displaced piece is a `knock`.
//!
//! Lifts and releases carry `conf` 0.95 (the board showed them for several readings), except a
//! release soon after the lift ([`QUICK_CONF`]) and a held piece set down on another square
//! where no hand was seen ([`UNSEEN_CONF`]: the readings lost the hand, or a piece carried over
//! the square read as set down there); touches carry theirs (see `contacts`).

use shakmaty::{Bitboard, Board, Color, Piece, Rank, Role, Square};

use super::carry::Carried;
use super::hands::Hands;
use super::set_content;
use super::squares::Squares;
use crate::detect::Reading;
use crate::events::{Action, Event, Hand};
use crate::reach::could_move;

/// How much later than the piece's arrival elsewhere the lift of a piece may be dated (its
/// square hidden under the hand that carries it) and still be read as the same gesture.
const LIFT_LATE_S: f64 = 1.0;
/// Confidence of changes the stable board showed.
const BOARD_CONF: f32 = 0.95;
/// A piece seen set down this soon (seconds) after it was seen gone...
const QUICK_S: f64 = 0.5;
/// ...may, back on its own square, have been lifted and put back, or only lost by the readings
/// for a moment (the engine then doubts the touch the lift made); elsewhere, it may be the hand
/// read as the piece where it passed (no hand carries a piece that fast: its lift was dated
/// back to the hand's arrival), and the engine doubts the move it makes. So may a piece back
/// on its own square after its player moved another piece meanwhile: the readings lost it in
/// the arm's shadow. The release carries this confidence.
const QUICK_CONF: f32 = 0.5;
/// A piece seen gone and back on its square within this many seconds was never lifted: the
/// readings lost it as an arm passed. On the real overhead clip's copies (blurred, dimmed,
/// shrunk, framed: `training/real/degrade.py`), the arm reaching in from the left edge took
/// a7's pawn and b8's knight off for 0.17-0.25 s in 7 of 14 copies, each such "lift" a touch
/// the engine then ruled on; no lift on the 32 rendered clips comes back within half a second.
const SHADOW_S: f64 = 0.3;
/// How long (seconds of settled readings) a piece seen leaving while another of its colour is
/// lifted too may wait for the readings to show which of them moved (see `Interpreter::lost`),
/// holding back the events after it; then it was lifted.
const UNDECIDED_S: f64 = 3.0;
/// A held piece set down out of sight is looked for on the squares whose median occupied
/// probability rose by at least this much, from the readings before it was lifted...
const UNSEEN_RISE: f32 = 0.05;
/// ...(those from this many seconds before the lift, up to [`LIFT_LATE_S`] before it, as the
/// lift may be dated late) to those since.
const UNSEEN_BEFORE_S: f64 = 4.0;
/// Confidence of a release where the readings did not show the piece.
pub(super) const UNSEEN_CONF: f32 = 0.6;
/// A captured piece's square whose readings since the capture have at least this median
/// occupied probability holds a piece (see `Interpreter::captured_by_unseen`).
const CAPTURED_OCCUPIED: f32 = 0.5;
/// Confidence of a release, and of the lift after it, where the readings glimpsed a held piece
/// through the hand for a moment: the piece may have been let go there, or only held low over
/// the square.
const GLIMPSE_CONF: f32 = 0.5;
/// How sure a contact seen only through the holding hand's stay at the piece is (see
/// [`Carried`]): under the rule engine's default `--min-conf`, so it supports a judgement,
/// never an accusation.
const STAY_CONF: f32 = 0.45;
/// Confidence of a knock: a piece that stops looking like itself may be toppled, or only
/// half hidden, blurred or mistaken by the model; the engine leaves a ruling on it to the arbiter.
const KNOCK_CONF: f32 = 0.5;

/// One dated observation, before interpretation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Observation {
    /// The content of `sq` changed.
    Change {
        /// The square.
        sq: Square,
        /// What stands there now.
        to: Option<Piece>,
        /// The hand seen there.
        hand: Option<Hand>,
    },
    /// A hand touched the piece standing on `sq`.
    Touch {
        /// The square.
        sq: Square,
        /// The hand.
        hand: Option<Hand>,
        /// How sure the tracker is.
        conf: f32,
        /// A graze on the way elsewhere rather than a touch.
        brush: bool,
    },
    /// The readings glimpsed `piece` on the empty square `sq` through the hand over it, from
    /// now until a [`Observation::GlimpseGone`] of the square, and then saw the square empty.
    Glimpse {
        /// The square.
        sq: Square,
        /// The piece read there.
        piece: Piece,
        /// The hand seen there.
        hand: Option<Hand>,
    },
    /// The last reading of a glimpse of a piece on `sq` (see [`Observation::Glimpse`]).
    GlimpseGone {
        /// The square.
        sq: Square,
        /// The hand seen there.
        hand: Option<Hand>,
    },
    /// The piece on `sq` was displaced or toppled.
    Knock {
        /// The square.
        sq: Square,
        /// The hand seen there.
        hand: Option<Hand>,
    },
    /// `hand` left the board, last seen over it at `seen`.
    Left {
        /// The hand.
        hand: Hand,
        /// When it was last seen over the board.
        seen: f64,
    },
}

/// A piece in a hand.
#[derive(Clone, Copy, Debug)]
struct Held {
    hand: Hand,
    piece: Piece,
    /// The square it was lifted from, and when.
    from: Square,
    at: f64,
    /// Another piece of its colour, not its castling partner, was set down elsewhere while it
    /// was held: a player moves one piece at a time, so this one may never have left (see
    /// [`QUICK_CONF`]).
    other_moved: bool,
    /// The squares where a contact reading showed its hand meeting a piece (already reported).
    met: Bitboard,
}

/// The waiting observations and what the hands hold.
#[derive(Clone, Debug)]
pub struct Interpreter {
    waiting: Vec<(f64, u64, Observation)>,
    seq: u64,
    board: Board,
    /// What the hands hold.
    held: Vec<Held>,
    last_hand: Option<Hand>,
    last_t: f64,
    /// Pawns set down on the last rank, not yet lifted again.
    unexchanged: Vec<Unexchanged>,
    /// The squares of pieces set down out of sight (see `Interpreter::set_down_unseen`).
    out_of_sight: Vec<Square>,
    /// The squares of held pieces glimpsed set down (see [`Observation::Glimpse`]), until the
    /// glimpse ends.
    glimpsed: Vec<Square>,
    /// What the stable board must be told, not yet taken by [`Interpreter::take_corrections`].
    corrections: Vec<Correction>,
    /// Pawns lifted from the rank before their last: their colour and square. Only next to
    /// one can a promotion piece come onto the board (and be exchanged for another).
    promoting: Vec<(Color, Square)>,
    /// Where the hands were (see [`Carried`]).
    carried: Carried,
}

/// A square whose stable content the readings got wrong, or could not show.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Correction {
    /// The square.
    pub sq: Square,
    /// What stands there.
    pub piece: Option<Piece>,
    /// Since when.
    pub t: f64,
    /// The piece stands where the readings cannot see it (see `Squares::correct`).
    pub out_of_sight: bool,
}

/// A pawn set down on the last rank, waiting to be exchanged.
#[derive(Clone, Copy, Debug)]
struct Unexchanged {
    sq: Square,
    /// The hand that set it down.
    hand: Hand,
    /// The piece the model read there (see `squares::best_of_color`).
    read: Piece,
}

impl Interpreter {
    /// Starts from `board`, nothing held.
    pub fn new(board: Board) -> Interpreter {
        Interpreter { waiting: Vec::new(), seq: 0, board, held: Vec::new(), last_hand: None, last_t: 0.0, unexchanged: Vec::new(), out_of_sight: Vec::new(), glimpsed: Vec::new(), corrections: Vec::new(), promoting: Vec::new(), carried: Carried::default() }
    }

    /// The squares of the other player's pieces that a piece in its own player's hand could
    /// take: there, the held piece meeting the piece standing is a capture begun (4.3.3). (A
    /// piece being taken off the board by the player who captured it threatens nothing.) A
    /// piece seen leaving in its player's hand is held already, its lift still waiting to be
    /// read (see `SHADOW_S`).
    pub fn capturable(&self) -> Bitboard {
        let held = self.held.iter().filter(|h| h.hand.side == h.piece.color).map(|h| (h.from, h.piece));
        let leaving = self.waiting.iter().filter_map(|(_, _, obs)| match *obs {
            Observation::Change { sq, to: None, hand: Some(hand) } => self.board.piece_at(sq).filter(|p| p.color == hand.side).map(|p| (sq, p)),
            _ => None,
        });
        held.chain(leaving).fold(Bitboard::EMPTY, |all, (from, piece)| all | self.takes(from, piece))
    }

    /// The squares of the pieces `piece` standing on `from` could take (pawns diagonally, kings
    /// beside them).
    fn takes(&self, from: Square, piece: Piece) -> Bitboard {
        self.board.by_color(!piece.color) & shakmaty::attacks::attacks(from, piece, self.board.occupied())
    }

    /// Takes in where the hands are (after `hands` took in `reading`).
    pub fn see_hands(&mut self, reading: &Reading, hands: &Hands) {
        self.carried.update(reading, hands);
    }

    /// Adds an observation dated `t`.
    pub fn push(&mut self, t: f64, obs: Observation) {
        self.waiting.push((t, self.seq, obs));
        self.seq += 1;
    }

    /// What the stable board got wrong or could not show, found since the last call: a piece
    /// misread in place, a piece set down out of sight or gone from there.
    pub fn take_corrections(&mut self) -> Vec<Correction> {
        std::mem::take(&mut self.corrections)
    }

    /// Interprets, in time order, the observations dated before `until`; `squares` has the
    /// readings' history.
    pub fn flush(&mut self, until: f64, squares: &Squares, out: &mut Vec<Event>) {
        self.waiting.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        self.drop_shadows();
        let n = self.waiting.iter().take_while(|w| w.0 < until).count();
        let mut ready: Vec<(f64, u64, Observation)> = self.waiting.drain(..n).collect();
        ready.reverse();
        while let Some((t, seq, obs)) = ready.pop() {
            if let Observation::Change { sq, to: None, .. } = obs {
                // A piece seen leaving waits until a return within `SHADOW_S` would be known;
                // one leaving while another of its colour is lifted too (see `lost`) waits for
                // the readings to show where the player sets a piece down. What follows waits
                // with it.
                let shadow_unknown = self.board.piece_at(sq).is_some() && until - t <= SHADOW_S;
                let wait = shadow_unknown
                    || match self.lost(sq, ready.iter().rev().map(|w| &w.2)) {
                        Some(true) => continue,
                        Some(false) => false,
                        None => until - t < UNDECIDED_S,
                    };
                if wait {
                    self.waiting.push((t, seq, obs));
                    self.waiting.append(&mut ready);
                    return;
                }
            }
            // Never back in time (before an event already out), even if an observation came in
            // later than promised. A hand's leaving waits a grace for pieces it set down as it
            // went, but what it did with the pieces it held, it did before it was last seen.
            let t = match obs {
                Observation::Left { seen, .. } => seen,
                _ => t,
            }
            .max(self.last_t);
            let before = out.len();
            // A piece that appears while no hand holds one of its colour was lifted from
            // elsewhere in the same gesture, its square seen empty a little later: read that
            // lift first.
            if let Observation::Change { sq, to: Some(seen), .. } = obs
                && self.board.piece_at(sq).is_none()
                && !self.holds(seen.color)
            {
                let lift = |w: &(f64, u64, Observation)| {
                    w.0 <= t + LIFT_LATE_S
                        && matches!(w.2, Observation::Change { sq: from, to: None, .. }
                            if self.board.piece_at(from).is_some_and(|p| p.color == seen.color))
                };
                if let Some(i) = ready.iter().rposition(lift) {
                    let (_, _, early) = ready.remove(i);
                    self.read(t, early, squares, out);
                } else if let Some(i) = self.waiting.iter().position(lift) {
                    let (_, _, early) = self.waiting.remove(i);
                    self.read(t, early, squares, out);
                }
            }
            self.read(t, obs, squares, out);
            if out.len() > before {
                self.last_t = t;
            }
        }
    }

    /// Removes from the waiting observations each piece seen leaving its square and back there
    /// within [`SHADOW_S`] (read as itself or misread: see [`Interpreter::misread`]), before the
    /// rules that weigh what else the hands did see it: the readings lost the piece as an arm
    /// passed.
    fn drop_shadows(&mut self) {
        let mut i = 0;
        while i < self.waiting.len() {
            match self.shadow_return(i) {
                Some(j) => {
                    self.waiting.remove(j);
                    self.waiting.remove(i);
                }
                None => i += 1,
            }
        }
    }

    /// Where, among the waiting observations, the return is that makes the `i`th a shadow (see
    /// [`Interpreter::drop_shadows`]), if it is one.
    fn shadow_return(&self, i: usize) -> Option<usize> {
        let (t, _, Observation::Change { sq, to: None, .. }) = self.waiting[i] else { return None };
        let piece = self.board.piece_at(sq)?;
        // What a waiting change of the square reads there.
        let change = |w: &(f64, u64, Observation)| match w.2 {
            Observation::Change { sq: on, to, .. } if on == sq => Some(to),
            _ => None,
        };
        let stays = |to: Option<Piece>| to.is_some_and(|seen| self.misread(piece, seen));
        // The piece is the board's: no earlier change of its square still waits but misreads.
        if !self.waiting[..i].iter().filter_map(change).all(stays) {
            return None;
        }
        let j = i + 1 + self.waiting[i + 1..].iter().position(|w| change(w).is_some())?;
        (self.waiting[j].0 - t <= SHADOW_S && change(&self.waiting[j]).is_some_and(stays)).then_some(j)
    }

    /// Whether the piece the readings saw leave `sq` never left it, while another of its colour
    /// (not its castling partner) is lifted too: a player moves one piece at a time, and a piece
    /// in a shadow or at an arm's edge is the one most often read as gone for a while. It never
    /// left if the first piece its player sets down in the `upcoming` readings is set down
    /// where it could not go and where the other could; it was lifted if it could go there, or
    /// if its player's hand leaves or the opponent acts first. `None` while the readings do not
    /// tell yet.
    fn lost<'a>(&self, sq: Square, upcoming: impl Iterator<Item = &'a Observation>) -> Option<bool> {
        let Some(piece) = self.board.piece_at(sq) else { return Some(false) };
        let partners = |other: Piece| not_together(piece, other);
        let mut others: Vec<(Square, Piece)> = self.held.iter().filter(|h| partners(h.piece)).map(|h| (h.from, h.piece)).collect();
        for obs in upcoming {
            match *obs {
                Observation::Change { sq: from, to: None, .. } if from != sq => {
                    others.extend(self.board.piece_at(from).filter(|&p| partners(p)).map(|p| (from, p)));
                }
                // A piece set down (where a hand was seen: others are misreads) by its player,
                // or in its colour: the model's colours are the less sure of the two.
                Observation::Change { sq: to, to: Some(seen), hand: Some(hand) } if seen.color == piece.color || hand.side == piece.color => {
                    let could_go = |from: Square, p: Piece| could_move(p, from, to, &self.board);
                    // The other may be put back where it stood.
                    return Some(to != sq && !could_go(sq, piece) && others.iter().any(|&(from, p)| from == to || could_go(from, p)));
                }
                Observation::Left { hand, .. } if hand.side == piece.color => return Some(false),
                Observation::Change { hand: Some(hand), .. } | Observation::Touch { hand: Some(hand), .. } if hand.side != piece.color => return Some(false),
                _ => {}
            }
        }
        if others.is_empty() { Some(false) } else { None }
    }

    fn read(&mut self, t: f64, obs: Observation, squares: &Squares, out: &mut Vec<Event>) {
        // The opponent acts: a promotion left waiting is over.
        if let Observation::Change { hand: Some(by), .. } | Observation::Touch { hand: Some(by), .. } | Observation::Knock { hand: Some(by), .. } = obs {
            self.exchange(t, |hand| hand.side != by.side, out);
        }
        // The opponent lifts a piece of theirs, holding none of the player's: the player's move
        // is over, and a piece of the player's still in hand was set down out of sight. So was
        // one in a hand that leaves the board, rather than carried off, if the readings tell
        // where.
        match obs {
            Observation::Change { sq, to: None, hand: Some(by) } if let Some(lifted) = self.board.piece_at(sq) => {
                if lifted.color == by.side && !self.holds(by.side) {
                    self.set_down_unseen(t, |h| h.hand.side != by.side && h.piece.color == h.hand.side, squares, out);
                }
                // Whichever side the hands were given (one person playing both sides, an arm
                // over a side edge): a held piece of the other colour that could not capture
                // the lifted one was set down before it was lifted; so was one of its own
                // colour, not its castling partner: a player moves one piece at a time.
                let board = self.board.clone();
                self.set_down_unseen(
                    t,
                    |h| if h.piece.color == lifted.color { not_together(h.piece, lifted) } else { !could_capture(h.piece, h.from, sq, lifted, &board) },
                    squares,
                    out,
                );
            }
            Observation::Left { hand, .. } => {
                self.set_down_unseen(t, |h| h.hand == hand && h.piece.color == hand.side, squares, out);
                self.captured_by_unseen(t, hand, squares, out);
            }
            _ => {}
        }
        self.read_now(t, obs, out)
    }

    /// The held pieces that `which` picks were set down where the readings could not see them:
    /// each on the square it could go to whose readings turned most towards a piece since it was
    /// lifted (by at least [`UNSEEN_RISE`]). One with no such square stays in the hand.
    fn set_down_unseen(&mut self, t: f64, which: impl Fn(&Held) -> bool, squares: &Squares, out: &mut Vec<Event>) {
        for i in (0..self.held.len()).rev() {
            if which(&self.held[i]) {
                self.set_down_unseen_one(t, i, squares, out);
            }
        }
    }

    fn set_down_unseen_one(&mut self, t: f64, i: usize, squares: &Squares, out: &mut Vec<Event>) {
        let Held { hand, piece, from, at, .. } = self.held[i];
        let rise = |sq: Square| Some(squares.occupied(sq, at, f64::INFINITY)? - squares.occupied(sq, at - UNSEEN_BEFORE_S, at - LIFT_LATE_S)?);
        let last_rank = |sq: Square| piece.role == Role::Pawn && sq.rank() == piece.color.other().backrank();
        let best = Square::ALL
            .into_iter()
            .filter(|&sq| sq != from && self.board.piece_at(sq).is_none() && !last_rank(sq) && could_move(piece, from, sq, &self.board))
            .filter_map(|sq| rise(sq).map(|r| (sq, r)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .filter(|&(_, r)| r >= UNSEEN_RISE);
        let Some((sq, _)) = best else { return };
        self.held.remove(i);
        self.last_hand = Some(hand);
        self.put_out_of_sight(t, sq, piece, hand, out);
    }

    /// `hand` set `piece` down on `sq`, where the readings cannot see it: a `release` with
    /// [`UNSEEN_CONF`], and the stable board told it stands there.
    fn put_out_of_sight(&mut self, t: f64, sq: Square, piece: Piece, hand: Hand, out: &mut Vec<Event>) {
        self.board.set_piece_at(sq, piece);
        self.out_of_sight.push(sq);
        self.corrections.push(Correction { sq, piece: Some(piece), t, out_of_sight: true });
        out.push(Event { t, action: set_down(hand, piece, sq), hand, conf: Some(UNSEEN_CONF), hand_conf: None });
    }

    /// `hand` took up the piece set down out of sight on `self.out_of_sight[k]`: a `lift` with
    /// [`UNSEEN_CONF`], and the stable board told it is gone. Returns where it stood and the piece.
    fn take_from_out_of_sight(&mut self, t: f64, k: usize, hand: Hand, out: &mut Vec<Event>) -> Option<(Square, Piece)> {
        let from = self.out_of_sight.remove(k);
        Some((from, self.lift_unseen(t, from, hand, out)?))
    }

    /// `hand` lifted the piece on `from` where the readings did not show it: a `lift` with
    /// [`UNSEEN_CONF`], and the stable board told it is gone. Returns the piece.
    fn lift_unseen(&mut self, t: f64, from: Square, hand: Hand, out: &mut Vec<Event>) -> Option<Piece> {
        let piece = self.board.remove_piece_at(from)?;
        self.corrections.push(Correction { sq: from, piece: None, t, out_of_sight: false });
        out.push(Event { t, action: taken_up(hand, piece, from), hand, conf: Some(UNSEEN_CONF), hand_conf: None });
        Some(piece)
    }

    /// `hand` leaves with a piece of the opponent's it lifted, and that piece's square reads
    /// occupied since (the median occupied probability of its readings since the lift at least
    /// [`CAPTURED_OCCUPIED`]), though no held piece was seen set down there: a piece of the
    /// hand's player that stood out of sight and could go there captured it (lifted from out of
    /// sight, with [`UNSEEN_CONF`]). With more than one such piece, or none, nothing is known.
    fn captured_by_unseen(&mut self, t: f64, hand: Hand, squares: &Squares, out: &mut Vec<Event>) {
        let captures: Vec<(Square, f64)> = self.held.iter().filter(|h| h.hand == hand && h.piece.color != hand.side).map(|h| (h.from, h.at)).collect();
        for (sq, at) in captures {
            if self.board.piece_at(sq).is_some() || squares.occupied(sq, at, f64::INFINITY).is_none_or(|p| p < CAPTURED_OCCUPIED) {
                continue;
            }
            let could = |o: &Square| self.board.piece_at(*o).is_some_and(|p| p.color == hand.side && could_move(p, *o, sq, &self.board));
            let [k] = self.out_of_sight.iter().enumerate().filter(|(_, o)| could(o)).map(|(k, _)| k).collect::<Vec<_>>()[..] else { continue };
            if let Some((_, piece)) = self.take_from_out_of_sight(t, k, hand, out) {
                self.put_out_of_sight(t, sq, piece, hand, out);
            }
        }
    }

    /// A pawn set down on the last rank and never lifted again, by a hand that `ends` says has
    /// finished, was exchanged in the hand (the pawn out, the new piece down in one gesture), or
    /// lifted and replaced under the hand where the readings could not see it: the piece read
    /// there is the promotion piece.
    fn exchange(&mut self, t: f64, ends: impl Fn(Hand) -> bool, out: &mut Vec<Event>) {
        for Unexchanged { sq, hand, read } in self.unexchanged.extract_if(.., |u| ends(u.hand)) {
            self.board.set_piece_at(sq, read);
            out.push(Event { t, action: Action::Remove(Some(sq)), hand, conf: Some(BOARD_CONF), hand_conf: None });
            out.push(Event { t, action: Action::Place { sq, piece: read }, hand, conf: Some(BOARD_CONF), hand_conf: None });
        }
    }

    fn read_now(&mut self, t: f64, obs: Observation, out: &mut Vec<Event>) {
        let emit = |hand: Hand, action: Action, conf: f32, out: &mut Vec<Event>| {
            out.push(Event { t, action, hand, conf: Some(conf), hand_conf: None });
        };
        match obs {
            Observation::Change { sq, to, hand } => {
                let from = self.board.piece_at(sq);
                let could_take = |seen: Piece| self.held.iter().any(|h| h.piece.color == seen.color && could_move(h.piece, h.from, sq, &self.board));
                if let (Some(stood), Some(seen)) = (from, to)
                    && (self.misread(stood, seen) || (hand.is_none() && !could_take(seen)))
                {
                    // The same colour again, or a piece turned the other colour while no hand
                    // held one of that colour, or with no hand there, none that could take it:
                    // the model misread the piece, which never moved.
                    self.corrections.push(Correction { sq, piece: from, t, out_of_sight: false });
                    return;
                }
                if let Some(seen) = to {
                    self.lift_out_of_sight(t, sq, seen, hand, out);
                }
                let holder = match (from, to, hand) {
                    // A piece appearing where no hand was seen: pieces do not arrive on their
                    // own, unless a hand holds one of its colour that could go there, or that
                    // stood there (the model lost the hand, not the piece): that one. Failing
                    // those, a held piece lifted from there, whatever colour the model reads
                    // (the least sure of its readings): it is back.
                    (None, Some(seen), None) => self
                        .held
                        .iter()
                        .rposition(|h| h.piece.color == seen.color && (h.from == sq || could_move(h.piece, h.from, sq, &self.board)))
                        .or_else(|| self.held.iter().rposition(|h| h.from == sq)),
                    (_, Some(seen), _) => self.holder(sq, seen, hand),
                    (_, None, _) => None,
                };
                // A pawn of its colour lifted from, or still on, the rank before the last, beside
                // it (the readings may see the new piece before the pawn gone).
                let promoting = to.is_some_and(|seen| {
                    let beside = |from: Square| from.file().distance(sq.file()) <= 1;
                    let seventh = seen.color.fold_wb(Rank::Seventh, Rank::Second);
                    self.promoting.iter().any(|&(color, from)| color == seen.color && beside(from))
                        || (self.board.pawns() & self.board.by_color(seen.color)).into_iter().any(|from| from.rank() == seventh && beside(from))
                });
                if let Some(seen) = to
                    && holder.is_none()
                    && (sq.rank() != seen.color.other().backrank() || !promoting || (from.is_none() && hand.is_none()))
                {
                    // A piece no hand held appearing anywhere but where a promotion piece is set
                    // down (by a hand seen there), next to a pawn lifted to promote: pieces come
                    // onto the board from off it only as promotion pieces. The hand itself, or
                    // its shadow, read as a piece, or a piece standing there read in the other
                    // colour; or moved from where the readings have not told yet (the game
                    // decoder reads that move, and the pipeline gives it its own events).
                    return;
                }
                set_content(&mut self.board, sq, to);
                self.unexchanged.retain(|u| u.sq != sq);
                self.out_of_sight.retain(|&o| o != sq);
                match (from, to) {
                    (Some(piece), None) => {
                        let hand = self.hand_or_guess(hand, piece.color);
                        if piece.role == Role::Pawn && sq.rank() == piece.color.fold_wb(Rank::Seventh, Rank::Second) {
                            self.promoting.push((piece.color, sq));
                        }
                        // A hand that took the other player's piece first and now lifts one of
                        // its own holds the taken piece no more: it went off the board as it was
                        // lifted (see `taken_up`), and the readings often miss the hand's quick
                        // trip off the board.
                        if piece.color == hand.side {
                            self.held.retain(|h| h.hand != hand || h.piece.color == hand.side);
                        }
                        self.held.push(Held { hand, piece, from: sq, at: t, other_moved: false, met: Bitboard::EMPTY });
                        emit(hand, taken_up(hand, piece, sq), BOARD_CONF, out);
                    }
                    (_, Some(seen)) => {
                        match holder {
                            Some(i) => {
                                let taken = self.held.remove(i);
                                let Held { hand: holder, piece: held, from, at: lifted, other_moved, met } = taken;
                                self.last_hand = Some(holder);
                                // Held at a piece it could take and carried away from it, still
                                // in hand, with no contact read there: the capture begun and
                                // taken back (see `Carried`), dated when the stay began.
                                if holder.side == held.color {
                                    for target in self.takes(from, held) & !met & !Bitboard::from(sq) {
                                        if let Some(first) = self.carried.stay(holder.side, target, lifted, t) {
                                            out.push(Event { t: self.no_earlier(first, t), action: Action::Contact { sq: target, piece: None }, hand: holder, conf: Some(STAY_CONF), hand_conf: None });
                                        }
                                    }
                                }
                                // The piece a hand held is the one set down, whatever the model
                                // reads: a pawn on the last rank among them (the model never saw
                                // one there in training and reads it as another piece), waiting
                                // to be exchanged.
                                self.board.set_piece_at(sq, held);
                                if held.role == Role::Pawn && sq.rank() == held.color.other().backrank() {
                                    self.unexchanged.push(Unexchanged { sq, hand: holder, read: seen });
                                }
                                // At once, or back where it stood after another piece of its
                                // player's moved: see `QUICK_S`.
                                let conf = if t - lifted < QUICK_S || (from == sq && other_moved) {
                                    QUICK_CONF
                                } else if hand.is_none() && from != sq {
                                    // Set down where no hand was seen: the readings lost the
                                    // hand, or a piece carried over the square read as set down.
                                    UNSEEN_CONF
                                } else {
                                    BOARD_CONF
                                };
                                if from != sq {
                                    for h in self.held.iter_mut().filter(|h| not_together(held, h.piece)) {
                                        h.other_moved = true;
                                    }
                                }
                                emit(holder, set_down(holder, held, sq), conf, out);
                            }
                            None => {
                                let hand = self.hand_or_guess(hand, seen.color);
                                emit(hand, Action::Place { sq, piece: seen }, BOARD_CONF, out);
                            }
                        }
                    }
                    (None, None) => {}
                }
            }
            Observation::Touch { sq, hand, conf, brush } => {
                let Some(piece) = self.board.piece_at(sq) else { return };
                let hand = self.hand_or_guess(hand, piece.color);
                let action = if brush {
                    Action::Brush(sq)
                } else if self.held.iter().any(|h| h.hand == hand) {
                    for h in self.held.iter_mut().filter(|h| h.hand == hand) {
                        h.met.add(sq);
                    }
                    Action::Contact { sq, piece: None }
                } else {
                    Action::Touch(sq)
                };
                emit(hand, action, conf, out);
            }
            Observation::Glimpse { sq, piece, hand } => {
                // A held piece that could go there: set down, with the hand still at it.
                let could = |h: &Held| h.piece == piece && h.from != sq && hand.is_none_or(|by| by.side == h.hand.side) && could_move(h.piece, h.from, sq, &self.board);
                if self.board.piece_at(sq).is_some() {
                    return;
                }
                let Some(i) = self.held.iter().rposition(could) else { return };
                let held = self.held.remove(i);
                self.board.set_piece_at(sq, piece);
                self.glimpsed.push(sq);
                self.last_hand = Some(held.hand);
                emit(held.hand, set_down(held.hand, piece, sq), GLIMPSE_CONF, out);
            }
            Observation::GlimpseGone { sq, hand } => {
                // ...and taken up again.
                let Some(k) = self.glimpsed.iter().position(|&g| g == sq) else { return };
                self.glimpsed.remove(k);
                let Some(piece) = self.board.remove_piece_at(sq) else { return };
                let hand = self.hand_or_guess(hand, piece.color);
                self.held.push(Held { hand, piece, from: sq, at: t, other_moved: false, met: Bitboard::EMPTY });
                emit(hand, taken_up(hand, piece, sq), GLIMPSE_CONF, out);
            }
            Observation::Knock { sq, hand } => {
                let Some(piece) = self.board.piece_at(sq) else { return };
                let hand = self.hand_or_guess(hand, piece.color);
                emit(hand, Action::Knock(sq), KNOCK_CONF, out);
            }
            Observation::Left { hand, .. } => {
                // The opponent's pieces it held went off the board as they were lifted.
                let n = self.held.iter().filter(|h| h.hand == hand && h.piece.color == hand.side).count();
                self.held.retain(|h| h.hand != hand);
                for _ in 0..n {
                    emit(hand, Action::Remove(None), BOARD_CONF, out);
                }
                self.exchange(t, |u| u == hand, out);
            }
        }
    }

    /// A piece of `seen`'s colour appears on `sq`, where no held piece could go: if a piece set
    /// down out of sight could, it was lifted from there (and is now held, to be released).
    fn lift_out_of_sight(&mut self, t: f64, sq: Square, seen: Piece, hand: Option<Hand>, out: &mut Vec<Event>) {
        let could = |p: Piece, from: Square| p.color == seen.color && could_move(p, from, sq, &self.board);
        if self.held.iter().any(|h| could(h.piece, h.from)) {
            return;
        }
        let Some(k) = self.out_of_sight.iter().position(|&o| self.board.piece_at(o).is_some_and(|p| could(p, o))) else { return };
        let hand = self.hand_or_guess(hand, seen.color);
        if let Some((from, piece)) = self.take_from_out_of_sight(t, k, hand, out) {
            self.held.push(Held { hand, piece, from, at: t, other_moved: false, met: Bitboard::EMPTY });
        }
    }

    /// The held piece that arrives on `sq` where `seen` is read, the hand `hand` seen there: the
    /// one a hand held (its kind is known from where it was lifted; the model's guess of the
    /// kind is a fallback): the hand seen there first, else any hand of that colour, else any
    /// hand; failing those, whatever the hand seen there holds, the colour misread. Where only
    /// the other player's hand is seen, a held piece that could not go there did not: that hand
    /// was read as a piece.
    fn holder(&self, sq: Square, seen: Piece, hand: Option<Hand>) -> Option<usize> {
        let held = &self.held;
        let there = |h: &Held| hand.is_none_or(|by| by.side == h.hand.side) || could_move(h.piece, h.from, sq, &self.board);
        held.iter()
            .rposition(|h| Some(h.hand) == hand && h.piece.color == seen.color)
            .or_else(|| held.iter().rposition(|h| h.piece.color == seen.color && h.hand.side == seen.color && there(h)))
            .or_else(|| held.iter().rposition(|h| h.piece.color == seen.color && there(h)))
            .or_else(|| held.iter().rposition(|h| Some(h.hand) == hand))
    }

    /// Whether a hand holds a piece of `color`.
    fn holds(&self, color: Color) -> bool {
        self.held.iter().any(|h| h.piece.color == color)
    }

    /// `at`, but never before an event already out (the events go out in time order), nor
    /// after `t`, when the observation that tells of it came.
    fn no_earlier(&self, at: f64, t: f64) -> f64 {
        at.max(self.last_t).min(t)
    }

    /// Whether `seen`, read where `stood` stands, is `stood` misread: the same colour again, or
    /// a colour no hand holds a piece of (the model's colours are the less sure of its
    /// readings).
    fn misread(&self, stood: Piece, seen: Piece) -> bool {
        stood.color == seen.color || !self.holds(seen.color)
    }

    /// The hand seen, else the last hand that acted, else the first hand of `side`.
    fn hand_or_guess(&mut self, hand: Option<Hand>, side: Color) -> Hand {
        let hand = hand.or(self.last_hand).unwrap_or(Hand { side, number: 1 });
        self.last_hand = Some(hand);
        hand
    }
}

/// What `hand` lifting `piece` from `sq` is: a `lift` of its player's piece, the removal of
/// the opponent's (a captured piece goes off the board as it is taken up; the rule engine
/// holds it no more).
fn taken_up(hand: Hand, piece: Piece, sq: Square) -> Action {
    if piece.color == hand.side { Action::Lift(sq) } else { Action::Remove(Some(sq)) }
}

/// What `hand` setting down the held `piece` on `sq` is: a `release` of its player's piece; an
/// opponent's piece, removed as it was lifted (see [`taken_up`]), comes back as placed.
fn set_down(hand: Hand, piece: Piece, sq: Square) -> Action {
    if piece.color == hand.side { Action::Release(sq) } else { Action::Place { sq, piece } }
}

/// Whether `a` and `b` are pieces a player does not move together (one piece at a time): of
/// one colour, and not castling's king and rook.
fn not_together(a: Piece, b: Piece) -> bool {
    a.color == b.color && !matches!((a.role, b.role), (Role::King, Role::Rook) | (Role::Rook, Role::King))
}

/// Whether `piece` on `from` could take `victim` on `sq`: move there, or (a pawn beside it on
/// its rank) take it en passant.
fn could_capture(piece: Piece, from: Square, sq: Square, victim: Piece, board: &Board) -> bool {
    let en_passant = piece.role == Role::Pawn && victim.role == Role::Pawn && from.rank() == sq.rank() && from.distance(sq) == 1;
    en_passant || could_move(piece, from, sq, board)
}

