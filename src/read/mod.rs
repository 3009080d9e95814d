//! The game decoder: reads the game from the board with the chess prior, never square by
//! square.
//!
//! It keeps a beam of hypotheses ([`hypothesis::Node`]): each a history of moves from the start
//! position and the board the camera should show now, the position reached or a state in the
//! middle of the next move (a piece in the hand, a capture half done, a king castled before its
//! rook). Each reading scores every hypothesis by [`observe::Evidence`] (occupancy and colour
//! first, the type weaker, each square weighted by how much of it is seen); moving between
//! hypotheses costs what [`Costs`] says (a move, moves missed between two readings, an illegal
//! move, a piece held with no hand in view). The cheapest history wins, Viterbi-style, so a
//! misread that a later reading contradicts is outvoted rather than followed.
//!
//! A move goes out once it is final ([`Commit::Final`], offline: every hypothesis alive holds
//! it, capped in time and in moves waiting) or after a short lag with no hand over its squares
//! ([`Commit::Lag`], live). Its times are those at which that history first showed it begun and
//! done. Live, a move that led for the lag and then lost the lead before going out is a
//! correction, said as a [`Decoded::Correction`].

pub mod hypothesis;
pub mod observe;
pub mod start;

use std::collections::HashMap;
use std::sync::Arc;

use shakmaty::{Bitboard, Board, Chess, Move, Position};

use crate::detect::Reading;
use hypothesis::{Node, Step, Transition};
use observe::{Evidence, Params};

/// What moving between hypotheses costs, in nats (negative log prior probabilities).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Costs {
    /// A legal move, from one reading to the next.
    pub legal: f64,
    /// Beginning a move (the first in-between state); completing it then costs
    /// `legal - begin`.
    pub begin: f64,
    /// Going from one in-between state of a move to another.
    pub step: f64,
    /// Putting the piece back: the move begun is not made.
    pub back: f64,
    /// Each move past the first between two readings (moves missed), on top of its own cost.
    /// Under what two squares can say ([`Params::floor`]): a ply changes two squares or so,
    /// and a sequence of missed moves must be able to pay for itself.
    pub skip: f64,
    /// An illegal move (Article 7.5) that moves its piece as its kind moves but leaves the
    /// mover's king in check (a move made in check that does not meet it, a pinned piece moved,
    /// castling through check), on top of a legal move's cost.
    pub in_check: f64,
    /// Any other illegal move (a piece moved as another moves), on top of a legal move's cost.
    pub illegal: f64,
    /// A piece held where no hand is seen, per look (see [`Params::look_s`]). Above what one
    /// square read wrong can cost a look (`-ln(floor)`, about 3.9 nats): a piece the readings
    /// lose on its square, or one the camera cannot see, is never explained as held for ever.
    pub unheld: f64,
    /// A promotion to a knight, on top of the move's cost: rare, so where the type reads no
    /// piece surely the queen is taken; but one look at a knight whose type reads clearly (at
    /// 0.9, about 1.1 nats with the default [`Params`]) outweighs it.
    pub underpromotion: f64,
    /// A promotion to a rook or a bishop, on top of the move's cost: about one promotion in a
    /// thousand (a queen does all they do), and their tops are the ones a queen's is mistaken
    /// for.
    pub long_underpromotion: f64,
}

impl Costs {
    /// What `tr`, a move of `before`, costs besides a legal move's cost: an illegal move's, an
    /// underpromotion's.
    fn price(&self, tr: &Transition, before: &Chess) -> f64 {
        match tr.mv.promotion() {
            _ if tr.illegal && tr.in_check(before) => self.in_check,
            _ if tr.illegal => self.illegal,
            Some(shakmaty::Role::Knight) => self.underpromotion,
            Some(shakmaty::Role::Rook | shakmaty::Role::Bishop) => self.long_underpromotion,
            _ => 0.0,
        }
    }
}

impl Default for Costs {
    fn default() -> Costs {
        Costs { legal: 4.0, begin: 2.0, step: 1.0, back: 2.0, skip: 2.0, in_check: 7.0, illegal: 20.0, unheld: 6.0, underpromotion: 1.0, long_underpromotion: 6.9 }
    }
}

/// The decoder's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    /// How readings are scored.
    pub params: Params,
    /// What moves cost.
    pub costs: Costs,
    /// When a move goes out: `analyse` once it is final, `live` after a short lag.
    pub commit: Commit,
    /// Most hypotheses kept.
    pub beam: usize,
    /// Hypotheses this many nats worse than the best are dropped.
    pub margin: f64,
    /// A time unseen from which several moves may lie between two readings (moves missed:
    /// stills, a dropped stretch of video, the board hidden by someone leaning over it). Frames
    /// the gate passed over as unchanged were seen ([`Decoder::saw`]).
    pub skip_gap_s: f64,
}

/// When a move goes out.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Commit {
    /// Once it has led for this many seconds (and as many independent looks as video gives in
    /// that time) with no hand over its squares: `live`, where a broadcast waits.
    Lag(f64),
    /// Once it is final: every hypothesis still alive holds it (the beam has coalesced on it)
    /// and no hand is over its squares (a hand there may still change it: a promotion's piece
    /// exchanged), or at the end of the input; `analyse` and `eval` have the whole recording.
    /// An ambiguity that lasts is capped: a move that has led for `patience_s`, no hand over its
    /// squares, goes out as the leading history has it, and so does the oldest of more than
    /// [`MOST_PENDING`] moves not out.
    Final {
        /// Seconds a leading move may wait for the beam to coalesce on it.
        patience_s: f64,
    },
}

impl Options {
    /// The lag `live` runs with: a move goes out about this long after the hand leaves it.
    pub const LIVE_LAG_S: f64 = 0.15;
    /// How long `analyse` lets a leading move wait to become final.
    pub const PATIENCE_S: f64 = 60.0;

    /// The defaults, a move going out after a lag of `lag_s` (see [`Commit::Lag`]).
    pub fn with_lag(lag_s: f64) -> Options {
        Options { commit: Commit::Lag(lag_s), ..Options::default() }
    }
}

impl Default for Options {
    fn default() -> Options {
        Options {
            params: Params::default(),
            costs: Costs::default(),
            commit: Commit::Final { patience_s: Options::PATIENCE_S },
            beam: 200,
            margin: 30.0,
            skip_gap_s: 0.4,
        }
    }
}

/// A move read from the board.
#[derive(Clone, Debug, PartialEq)]
pub struct DecodedMove {
    /// The move, in the position before it.
    pub mv: Move,
    /// The position before it.
    pub before: Chess,
    /// Not a legal move there (Article 7.5).
    pub illegal: bool,
    /// When the board first showed it begun, in the history read.
    pub began: f64,
    /// When the board first showed it done, in the history read.
    pub t: f64,
    /// Where the board showed it done with no hand seen over the board for seconds (photos, a
    /// photo a move held as video), that moment: its piece had been let go by then.
    pub released: Option<f64>,
    /// How sure the decoder is, 0.5 to 1: from the cost of the best history without it.
    pub conf: f32,
}

impl DecodedMove {
    /// The position after the move (an illegal one: the piece where it was set, the other side
    /// to move).
    pub fn after(&self) -> Chess {
        hypothesis::after(&self.before, self.mv, self.illegal)
    }

    /// Whether the move, illegal, moves its piece as its kind moves and breaks only the rule on
    /// the king ([`hypothesis::as_its_kind`]).
    pub fn as_its_kind(&self) -> bool {
        hypothesis::as_its_kind(self.mv, &self.before)
    }
}

/// What the decoder says.
#[derive(Clone, Debug, PartialEq)]
pub enum Decoded {
    /// The next move of the game.
    Move(DecodedMove),
    /// The input ended in the middle of a move: the move, where the board shows which, and
    /// what to say of it.
    Unfinished {
        /// The end of the input.
        t: f64,
        /// What the board shows, in words.
        text: String,
        /// The move under way, where the board shows which (a piece set on its new square).
        mv: Option<DecodedMove>,
    },
    /// Live: moves already put out that the readings now show otherwise, taken back from the
    /// `from`-th move put out (0 for the first) and replaced.
    Replaced {
        /// When the decoder changed its mind.
        t: f64,
        /// How many of the moves put out before stand.
        from: usize,
        /// The moves taken back.
        replaced: Vec<DecodedMove>,
        /// The moves read in their place (none where the readings show no move was made).
        by: Vec<DecodedMove>,
    },
    /// A move that led was replaced by another reading of the game before it went out.
    Correction {
        /// When the other reading took the lead.
        t: f64,
        /// What changed, in words.
        text: String,
    },
}

/// A move of the leading history not yet out, since when it has led, and over how many
/// independent looks at the board ([`Params::look_s`]).
#[derive(Clone, Debug)]
struct Leading {
    step: Arc<Step>,
    since: f64,
    looks: f64,
    /// The squares the move changes.
    squares: Bitboard,
}

/// The decoder: feed it readings in time order.
pub struct Decoder {
    opts: Options,
    beam: Vec<Node>,
    leading: Vec<Leading>,
    last_t: f64,
    /// The last frame that showed the board: a reading with less than half of it under hands
    /// and arms, or a frame the gate passed over after one (see [`Decoder::saw`]).
    seen_t: f64,
    /// Whether the last reading showed the board.
    shown_last: bool,
    /// Moves of positions met, kept while the beam holds them.
    moves: HashMap<u64, Arc<Vec<Transition>>>,
    /// Each square's likeliest class as last read (none under a hand), and since when it has
    /// read so.
    views: [(Option<usize>, f64); 64],
    /// When a hand last covered each square.
    covered: [f64; 64],
    /// Squares the camera misread where the start position was known ([`Decoder::distrust`]).
    distrusted: Bitboard,
    /// The moves sent, in order (the last is where the next goes out from).
    sent: Vec<Arc<Step>>,
    /// Live: the first move sent that the leading history does not hold, what it holds there
    /// instead, and since when it has led so.
    rival: Option<(usize, Option<Arc<Step>>, f64)>,
}

/// Seconds after a hand covered a square during which a piece may have been set there, and
/// the camera is taken to see the hands that move the pieces.
const REACHED_S: f64 = 5.0;

/// Squares under hands and arms from which a reading does not show the board: half of it
/// (someone leaning over the board, not a hand making a move).
const HIDDEN: usize = 32;

/// Live, how much likelier (in nats) the reading that takes moves sent back must be than the
/// best that keeps them: 100 to 1.
const CORRECTION_MARGIN: f64 = 4.6;

/// The confidence of a move put out unfinished ([`Decoded::Unfinished`]): no ruling rests on
/// it alone.
const UNFINISHED_CONF: f32 = 0.5;

/// The most moves of the leading history that wait to become final ([`Commit::Final`]): past
/// it, the oldest goes out as the leading history has it.
pub const MOST_PENDING: usize = 16;

/// What the readings of a square the camera misread at the start count ([`Decoder::distrust`]):
/// a tenth, so that the same misread over the next seconds of a move no longer pays for an
/// illegal move that explains it (20 nats), while a piece's arrival there still reads.
const DISTRUSTED_WEIGHT: f32 = 0.1;

/// The most moves read between two readings after a gap ([`Options::skip_gap_s`]).
const BRIDGE_PLIES: usize = 8;

/// Move sequences kept per ply while looking for the moves a gap hid ([`Decoder::bridge`]).
const BRIDGE_WIDTH: usize = 96;

/// The quiet hypotheses, best first, from which moves hidden by a gap are looked for.
const BRIDGE_FROM: usize = 2;

/// The move sequences hidden by a gap kept from each of them (see [`Decoder::bridge`]).
const BRIDGE_KEPT: usize = 8;

impl Decoder {
    /// A decoder for a game starting from `start`.
    pub fn new(start: Chess, opts: Options) -> Decoder {
        Decoder { opts, beam: vec![Node::start(start)], leading: Vec::new(), last_t: f64::NEG_INFINITY, seen_t: f64::NEG_INFINITY, shown_last: false, moves: HashMap::new(), views: [(None, f64::NEG_INFINITY); 64], covered: [f64::NEG_INFINITY; 64], distrusted: Bitboard::EMPTY, sent: Vec::new(), rival: None }
    }

    /// The board the leading hypothesis shows now (a state in the middle of a move included).
    pub fn shown(&self) -> &Board {
        &self.beam[0].shown
    }

    /// The squares whose kind (empty, White, Black) the hypotheses agree on, weighing each by
    /// its probability, with at least `p`: where a misread can safely be overruled.
    pub fn sure(&self, p: f64) -> Bitboard {
        let weights: Vec<f64> = self.beam.iter().map(|n| (-(n.cost - self.beam[0].cost)).exp()).collect();
        let total: f64 = weights.iter().sum();
        let lead = &self.beam[0].shown;
        let kind = |b: &Board, sq| b.piece_at(sq).map(|piece: shakmaty::Piece| piece.color);
        shakmaty::Square::ALL
            .into_iter()
            .filter(|&sq| {
                let agree: f64 = self.beam.iter().zip(&weights).filter(|(n, _)| kind(&n.shown, sq) == kind(lead, sq)).map(|(_, w)| w).sum();
                agree >= p * total
            })
            .collect()
    }

    /// The position the leading history reaches.
    pub fn position(&self) -> &Chess {
        &self.beam[0].pos
    }

    /// Whether a move of the leading history waits to go out, or a reading that takes moves
    /// sent back waits to replace them: readings now decide when.
    pub fn undecided(&self) -> bool {
        !self.leading.is_empty() || self.rival.is_some()
    }

    /// Takes in the next reading; appends what it decides to `out`. A reading not after the
    /// previous one is ignored.
    pub fn push(&mut self, reading: &Reading, out: &mut Vec<Decoded>) {
        let t = reading.t;
        if t.is_nan() || t <= self.last_t {
            return;
        }
        let dt = t - self.last_t;
        let unseen = t - self.seen_t;
        self.last_t = t;
        let still = self.stillness(reading);
        let mut ev = Evidence::with_stillness(reading, dt, &still, &self.opts.params);
        ev.discount(self.distrusted, DISTRUSTED_WEIGHT);
        self.step(&ev, t, unseen);
        self.shown_last = ev.covered.count() < HIDDEN;
        if self.shown_last {
            self.seen_t = t;
        }
        // Frames seen between two readings were looks at the same board; a time unseen is one
        // look, however long.
        let looks = if unseen < self.opts.skip_gap_s { dt / self.opts.params.look_s } else { ev.weight };
        self.follow(t, looks, out);
        self.emit(t, Some(&ev), out);
    }

    /// Trusts the readings of `squares` less from now on ([`DISTRUSTED_WEIGHT`]): the camera
    /// read them in the other kind (empty, White, Black) while the start position, given, stood
    /// there. A camera's misread of one square is a misread of its view (a reflection, the
    /// board's edge, a piece's top seen askew) and repeats in every frame; counted in full, it
    /// outweighs any move that explains it within seconds, a capture onto it that never was.
    pub fn distrust(&mut self, squares: Bitboard) {
        self.distrusted = squares;
    }

    /// How long each square's reading has stood unchanged at `reading` (its likeliest class the
    /// same, no hand over it), in seconds.
    fn stillness(&mut self, reading: &Reading) -> [f64; 64] {
        std::array::from_fn(|i| {
            let r = &reading.squares[i];
            let class = r.classes.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).map_or(0, |(c, _)| c);
            let view = if r.cover >= observe::COVERED { None } else { Some(class) };
            if view.is_none() || self.views[i].0 != view {
                self.views[i] = (view, reading.t);
            }
            reading.t - self.views[i].1
        })
    }

    /// A frame at `t` seconds that was seen but not read, because nothing on it had moved
    /// since the last reading: where that reading showed the board, the time up to this frame
    /// hid no move (see [`Options::skip_gap_s`]).
    pub fn saw(&mut self, t: f64) {
        if self.shown_last {
            self.seen_t = self.seen_t.max(t);
        }
    }

    /// Ends the input: every move of the leading history goes out, and a move the footage ends
    /// in the middle of is said ([`Decoded::Unfinished`]).
    pub fn finish(&mut self, out: &mut Vec<Decoded>) {
        let t = self.last_t;
        self.follow(t, 0.0, out);
        self.emit(t, None, out);
        if !self.beam[0].quiet() {
            let node = self.beam[0].clone();
            out.push(self.unfinished(&node, t));
        }
    }

    /// The move `node` shows under way at the end of the input: put out where the board shows
    /// which it is (a piece set on its new square, the rest of the move not done, and one legal
    /// move that does so), else only said.
    fn unfinished(&mut self, node: &Node, t: f64) -> Decoded {
        let diff = node.diff();
        let legal = self.transitions(&node.pos);
        let shows = |tr: &&Transition| tr.explains(&node.shown, diff) && tr.changes.iter().any(|c| c.new.is_some() && c.new != c.old && node.shown.piece_at(c.sq) == c.new);
        let mut shown = legal.iter().filter(shows);
        let squares = diff.into_iter().map(|sq| sq.to_string()).collect::<Vec<_>>().join(", ");
        match (shown.next(), shown.next()) {
            (Some(tr), None) => {
                let text = format!("the footage ends in the middle of {} ({squares} as the board shows them): put out unfinished", san(&node.pos, tr.mv));
                let mv = DecodedMove { mv: tr.mv, before: node.pos.clone(), illegal: false, began: node.began, t, released: None, conf: UNFINISHED_CONF };
                Decoded::Unfinished { t, text, mv: Some(mv) }
            }
            _ => Decoded::Unfinished { t, text: format!("the footage ends in the middle of a move ({squares} as the board shows them): which move is not shown, so none is put out"), mv: None },
        }
    }

    /// The moves of `pos`, legal ones and (where the evidence shows a piece of the mover's gone
    /// from one square and one of its colour on another no legal move explains) illegal ones.
    fn transitions(&mut self, pos: &Chess) -> Arc<Vec<Transition>> {
        let key: shakmaty::zobrist::Zobrist64 = pos.zobrist_hash(shakmaty::EnPassantMode::Legal);
        if self.moves.len() > 4096 {
            self.moves.clear();
        }
        self.moves.entry(key.0).or_insert_with(|| Arc::new(hypothesis::moves(pos))).clone()
    }

    /// Illegal moves the board proposes from `pos`: a piece of the mover's read gone from its
    /// square and one of its colour read, on a square of `reached`, where no legal move puts
    /// one; and castling the board shows made where the rules forbid it (out of, through or into
    /// check).
    fn illegal(pos: &Chess, legal: &[Transition], ev: &Evidence, reached: Bitboard) -> Vec<Transition> {
        let mover = pos.turn();
        let board = pos.board();
        let gone = board.by_color(mover) & ev.empty;
        let came = ev.colour(mover) & !board.by_color(mover) & reached;
        let mut out = Vec::new();
        for from in gone {
            for to in came {
                if legal.iter().any(|tr| tr.mv.from() == Some(from) && tr.mv.to() == to) || board.role_at(to) == Some(shakmaty::Role::King) {
                    continue;
                }
                out.extend(Transition::illegal(pos, from, to));
            }
        }
        if let Some(king) = board.king_of(mover).filter(|k| gone.contains(*k)) {
            for rook in pos.castles().castling_rights() & board.by_color(mover) {
                if !legal.iter().any(|tr| tr.mv == Move::Castle { king, rook }) {
                    out.extend(Transition::illegal_castle(pos, king, rook));
                }
            }
        }
        out
    }

    /// One reading, `unseen` seconds after the last frame seen: every hypothesis stays, moves
    /// on or begins a move.
    fn step(&mut self, ev: &Evidence, t: f64, unseen: f64) {
        let costs = self.opts.costs;
        let skip = unseen >= self.opts.skip_gap_s;
        // Pieces move in hands. Where the camera sees them (video with a hand over the board
        // lately), an illegal move is proposed only onto a square a hand covered lately: a
        // square read otherwise where no hand went is a misread. Where it sees none (stills a
        // move apart, photos made into a video, a fast hand at a slow frame rate), any square
        // will do. A hand is seen by the squares it covers: the hand map's faint blips on a
        // photo held as video (0.5 in one frame, no square covered) are no hand, and took a
        // Black pawn's second move in check for a misread.
        for sq in ev.covered {
            self.covered[sq as usize] = t;
        }
        let reached: Bitboard = shakmaty::Square::ALL.into_iter().filter(|&sq| t - self.covered[sq as usize] <= REACHED_S).collect();
        // No hand in view lately: a move the board shows done was let go by now.
        let bare = reached.is_empty();
        let reached = if skip || bare { Bitboard::FULL } else { reached };
        let unheld = costs.unheld * ev.weight * f64::from(1.0 - ev.hands);
        let beam = std::mem::take(&mut self.beam);
        let mut next: HashMap<(u64, u64), Node> = HashMap::new();
        let mut keep = |node: Node| {
            let key = node.key();
            match next.get(&key) {
                Some(n) if n.cost <= node.cost => {}
                _ => {
                    next.insert(key, node);
                }
            }
        };
        // Quiet hypotheses met so far, best first.
        let mut settled = 0;
        for node in &beam {
            let quiet = node.quiet();
            // The cost of this reading on the board shown, before what being in the middle of a
            // move with no hand in view adds.
            let seen = node.cost + ev.board(&node.shown);
            let held = if quiet { 0.0 } else { unheld };
            keep(Node { cost: seen + held, ..node.clone() });
            // What a board with `edits` to the position's costs, against staying.
            let cost_of = |edits: &mut dyn Iterator<Item = (shakmaty::Square, Option<shakmaty::Piece>)>| -> f64 {
                edits.map(|(sq, p)| ev.square(sq, p) - ev.square(sq, node.shown.piece_at(sq))).sum::<f64>()
            };
            let legal = self.transitions(&node.pos);
            let illegal = if quiet { Decoder::illegal(&node.pos, &legal, ev, reached) } else { Vec::new() };
            let diff = node.diff();
            // What this reading says of the board the best single move shows, against now.
            let mut one_move = 0.0f64;
            for tr in legal.iter().chain(&illegal) {
                if !quiet && !tr.explains(&node.shown, diff) {
                    continue;
                }
                let price = costs.price(tr, &node.pos);
                // Completed.
                let done = cost_of(&mut tr.changes.iter().map(|c| (c.sq, c.new)).chain(diff.into_iter().filter(|sq| !tr.squares().contains(*sq)).map(|sq| (sq, node.pos.board().piece_at(sq)))));
                one_move = one_move.min(done);
                let moved = if quiet { costs.legal } else { costs.legal - costs.begin };
                // A successor is proposed only where this reading favours what it shows over
                // what the board shows now: where it does not, it can come at a later reading
                // that does. Its price is paid once; the evidence for it adds up reading by
                // reading.
                if done - held < 0.0 {
                    keep(node.complete(tr, seen + done + moved + price, t, bare));
                }
                if tr.illegal {
                    continue;
                }
                // Begun, or further along.
                for edits in tr.between(node.pos.board()) {
                    let reverted = diff.into_iter().filter(|sq| !edits.iter().any(|e| e.0 == *sq)).map(|sq| (sq, node.pos.board().piece_at(sq)));
                    let delta = cost_of(&mut edits.iter().copied().chain(reverted));
                    let moved = if quiet { costs.begin } else { costs.step };
                    if delta + unheld - held < 0.0 {
                        keep(node.between(&edits, seen + delta + moved + unheld, if quiet { t } else { node.began }));
                    }
                }
            }
            // The piece put back: the position again.
            if !quiet {
                let back = cost_of(&mut diff.into_iter().map(|sq| (sq, node.pos.board().piece_at(sq))));
                if back - held < 0.0 {
                    keep(Node { shown: node.pos.board().clone(), cost: seen + back + costs.back, ..node.clone() });
                }
            }
            // Several moves between two readings, from the best few quiet hypotheses where no
            // single move explains this reading: where it contradicts even the best one's board
            // by a move's worth, in a full look. The readings after the gap pay a sequence back
            // one by one, as they pay a move back; this one need only favour its board.
            if skip && quiet && settled < BRIDGE_FROM && seen - node.cost + one_move >= ev.weight * (costs.legal + costs.skip) {
                for (steps, price, delta) in self.bridge(node, ev).into_iter().filter(|b| b.2 < 0.0).take(BRIDGE_KEPT) {
                    let (last, first) = steps.split_last().expect("a bridge has moves");
                    let to = first.iter().fold(node.clone(), |to, tr| to.complete(tr, 0.0, t, bare));
                    keep(to.complete(last, seen + delta + price, t, bare));
                }
            }
            settled += usize::from(quiet);
        }
        // Ties are broken by the key, so that a run is the same every time.
        let mut beam: Vec<((u64, u64), Node)> = next.into_iter().collect();
        beam.sort_by(|a, b| a.1.cost.total_cmp(&b.1.cost).then(a.0.cmp(&b.0)));
        let mut beam: Vec<Node> = beam.into_iter().map(|(_, n)| n).collect();
        let best = beam[0].cost;
        beam.retain(|n| n.cost <= best + self.opts.margin);
        beam.truncate(self.opts.beam);
        for n in &mut beam {
            n.cost -= best;
        }
        self.beam = beam;
    }

    /// Sequences of two to [`BRIDGE_PLIES`] legal moves from `node`'s position that the
    /// reading `ev` may show after a gap (stills, a dropped stretch of video), those that
    /// explain it best first (the readings after it favour them as much), the cheapest of those
    /// first: each with its price (each move's cost, and [`Costs::skip`] for every move past the
    /// first) and what `ev` says of its board against `node`'s. A beam search, ply by ply,
    /// keeping the [`BRIDGE_WIDTH`] sequences whose board `ev` favours most (a transposition
    /// once): a move the reading shows makes its squares cheaper, so the moves the gap hid are
    /// found among all the games it could hide without listing them (40 moves a ply, a hundred
    /// million sequences of five).
    fn bridge(&mut self, node: &Node, ev: &Evidence) -> Vec<(Vec<Transition>, f64, f64)> {
        /// A sequence: each move as the moves of its position and an index among them.
        type Path = Vec<(Arc<Vec<Transition>>, usize)>;
        /// A sequence, its price, what `ev` says of its board, and of the squares on it that
        /// `ev` favours alone (those it does not may yet be put right by a later move).
        type Entry = (Path, f64, f64, f64);
        let costs = self.opts.costs;
        let mut frontier: Vec<Entry> = vec![(Vec::new(), 0.0, 0.0, 0.0)];
        let mut out = Vec::new();
        for ply in 1..=BRIDGE_PLIES {
            let mut next: HashMap<u64, Entry> = HashMap::new();
            for (path, price, _, _) in &frontier {
                // The positions met here are not the beam's: they stay out of its cache.
                let moves = match path.last().map(|(moves, i)| &moves[*i]) {
                    None => self.transitions(&node.pos),
                    Some(tr) => Arc::new(hypothesis::moves(&tr.after)),
                };
                for (i, tr) in moves.iter().enumerate() {
                    let board = tr.after.board();
                    let (mut delta, mut hope) = (0.0, 0.0);
                    for sq in crate::rules::differing(&node.shown, board) {
                        let d = ev.square(sq, board.piece_at(sq)) - ev.square(sq, node.shown.piece_at(sq));
                        delta += d;
                        hope += d.min(0.0);
                    }
                    let price = price + costs.legal + if ply > 1 { costs.skip } else { 0.0 } + costs.price(tr, path.last().map_or(&node.pos, |(moves, i)| &moves[*i].after));
                    let key = tr.after.zobrist_hash::<shakmaty::zobrist::Zobrist64>(shakmaty::EnPassantMode::Legal).0;
                    if next.get(&key).is_none_or(|n| n.1 + n.3 > price + hope) {
                        let mut path = path.clone();
                        path.push((moves.clone(), i));
                        next.insert(key, (path, price, delta, hope));
                    }
                }
            }
            // Ranked by what they may still become; ties are broken by the key, so that a run
            // is the same every time.
            let mut next: Vec<_> = next.into_iter().collect();
            next.sort_by(|(ka, a), (kb, b)| (a.1 + a.3).total_cmp(&(b.1 + b.3)).then(ka.cmp(kb)));
            frontier = next.into_iter().take(BRIDGE_WIDTH).map(|(_, n)| n).collect();
            if ply > 1 {
                out.extend(frontier.iter().map(|(path, price, delta, _)| (path.clone(), *price, *delta)));
            }
        }
        out.sort_by(|a, b| a.2.total_cmp(&b.2).then(a.1.total_cmp(&b.1)));
        out.into_iter().map(|(path, price, delta)| (path.iter().map(|(moves, i)| moves[*i].clone()).collect(), price, delta)).collect()
    }

    /// Follows the leading history after a reading worth `looks` independent looks: the moves
    /// not yet out, and since when each has led; a move that led for a while and was replaced
    /// is a correction.
    fn follow(&mut self, t: f64, looks: f64, out: &mut Vec<Decoded>) {
        self.revise(t, out);
        // Live, a leading history that takes back a move sent puts nothing more out until it
        // has replaced it.
        if self.sent.last().is_some_and(|o| !holds(&self.beam[0], o)) {
            self.leading.clear();
            return;
        }
        let done = self.sent.last().map_or(0, |s| s.depth);
        let steps = after(&self.beam[0], done);
        let mut leading: Vec<Leading> = Vec::with_capacity(steps.len());
        let mut same = true;
        for (i, s) in steps.into_iter().enumerate() {
            same &= self.leading.get(i).is_some_and(|l| l.step.mv == s.mv && l.step.illegal == s.illegal);
            let (since, before, squares) = match self.leading.get(i) {
                Some(l) if same => (l.since, l.looks, l.squares),
                _ => (t, 0.0, hypothesis::changes(s.before.board(), hypothesis::after(&s.before, s.mv, s.illegal).board()).iter().map(|c| c.sq).collect()),
            };
            leading.push(Leading { step: s, since, looks: before + looks, squares });
        }
        // A move the decoder only holds back until it is final was never said: replacing it
        // is no correction.
        let said = match self.opts.commit {
            Commit::Lag(lag_s) => lag_s,
            Commit::Final { .. } => f64::INFINITY,
        };
        for (i, old) in self.leading.iter().enumerate() {
            let kept = leading.get(i).is_some_and(|l| l.since == old.since);
            if !kept && t - old.since >= said {
                let now = leading.get(i).map_or("no move".to_string(), |l| san(&l.step.before, l.step.mv));
                out.push(Decoded::Correction { t, text: format!("the board now reads {now} where it read {} since {:.2} s", san(&old.step.before, old.step.mv), old.since) });
                break;
            }
        }
        self.leading = leading;
    }

    /// Sends out the leading moves that may go out ([`Options::commit`]); all of them at the
    /// end of the input (`ev` `None`).
    fn emit(&mut self, t: f64, ev: Option<&Evidence>, out: &mut Vec<Decoded>) {
        let mut sent = 0;
        let pending = self.leading.len();
        for (i, l) in self.leading.iter().enumerate() {
            if let Some(ev) = ev {
                let clear = !(l.squares & ev.covered).any();
                let ready = match self.opts.commit {
                    Commit::Lag(lag_s) => clear && t - l.since >= lag_s && l.looks >= lag_s / self.opts.params.look_s,
                    Commit::Final { patience_s } => (clear && (self.held_by_all(&l.step) || t - l.since >= patience_s)) || pending - i > MOST_PENDING,
                };
                if !ready {
                    break;
                }
            }
            let conf = self.conf(&l.step);
            tracing::debug!("{} goes out at {t:.2}s: begun {:.2}s, done {:.2}s, leading since {:.2}s", san(&l.step.before, l.step.mv), l.step.began, l.step.t, l.since);
            out.push(Decoded::Move(l.step.decoded(conf)));
            self.sent.push(l.step.clone());
            sent += 1;
        }
        if sent == 0 {
            return;
        }
        self.leading.drain(..sent);
        // Offline only histories through the moves sent remain (the leading one among them: the
        // moves sent are its own): they were final. Live the others stay, and one of them may
        // yet take the moves sent back (see `revise`).
        if matches!(self.opts.commit, Commit::Final { .. }) {
            let tip = self.sent.last().cloned().expect("a move was sent");
            self.beam.retain(|n| holds(n, &tip));
        }
    }

    /// Live: where the leading history no longer holds a move sent, and has led without it for
    /// the lag and by [`CORRECTION_MARGIN`] over the best history that holds it, the moves sent
    /// from that one on are taken back and the leading history's put out in their place.
    fn revise(&mut self, t: f64, out: &mut Vec<Decoded>) {
        let Commit::Lag(lag_s) = self.opts.commit else { return };
        let leader = &self.beam[0];
        let Some(from) = self.sent.iter().position(|s| !holds(leader, s)) else {
            self.rival = None;
            return;
        };
        let instead = leader.hist.as_ref().and_then(|h| h.at(from + 1));
        let same = self.rival.as_ref().is_some_and(|(k, step, _)| *k == from && step.as_ref().map(Arc::as_ptr) == instead.as_ref().map(Arc::as_ptr));
        if !same {
            self.rival = Some((from, instead, t));
            return;
        }
        let since = self.rival.as_ref().map_or(t, |r| r.2);
        let kept = self.beam.iter().filter(|n| holds(n, &self.sent[from])).map(|n| n.cost).fold(f64::INFINITY, f64::min);
        if t - since < lag_s || kept - leader.cost < CORRECTION_MARGIN {
            return;
        }
        let by = after(leader, from);
        let replaced: Vec<DecodedMove> = self.sent[from..].iter().map(|s| s.decoded(self.conf(s))).collect();
        let placed: Vec<DecodedMove> = by.iter().map(|s| s.decoded(self.conf(s))).collect();
        tracing::debug!("taken back from move {}: {} read as {}", from + 1, replaced.iter().map(|m| san(&m.before, m.mv)).collect::<Vec<_>>().join(" "), placed.iter().map(|m| san(&m.before, m.mv)).collect::<Vec<_>>().join(" "));
        out.push(Decoded::Replaced { t, from, replaced, by: placed });
        self.sent.truncate(from);
        self.sent.extend(by);
        self.leading.clear();
        self.rival = None;
    }

    /// Whether every hypothesis alive holds `step`: no reading to come can replace it.
    fn held_by_all(&self, step: &Arc<Step>) -> bool {
        self.beam.iter().all(|n| holds(n, step))
    }

    /// How sure the decoder is of `step`: the best history that does not hold it, against the
    /// best.
    fn conf(&self, step: &Arc<Step>) -> f32 {
        let rival = self
            .beam
            .iter()
            .filter(|n| !holds(n, step))
            .map(|n| n.cost)
            .fold(f64::INFINITY, f64::min);
        let margin = rival - self.beam[0].cost;
        (1.0 / (1.0 + (-margin).exp())) as f32
    }
}

/// The moves of `node`'s history past the first `depth`, in order.
fn after(node: &Node, depth: usize) -> Vec<Arc<Step>> {
    let mut steps = Vec::new();
    let mut step = node.hist.clone();
    while let Some(s) = step {
        if s.depth <= depth {
            break;
        }
        step = s.prev.clone();
        steps.push(s);
    }
    steps.reverse();
    steps
}

/// Whether `node`'s history holds `step`.
fn holds(node: &Node, step: &Arc<Step>) -> bool {
    node.hist.as_ref().and_then(|h| h.at(step.depth)).is_some_and(|s| Arc::ptr_eq(&s, step))
}

/// `mv` in SAN, in `pos`.
fn san(pos: &Chess, mv: Move) -> String {
    shakmaty::san::San::from_move(pos, mv).to_string()
}

#[cfg(test)]
mod tests;
