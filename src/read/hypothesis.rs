//! The decoder's hypotheses: a game history (a chain of decoded moves) and the board the camera
//! should show now, which is the position the history reaches or a state in the middle of the
//! next move: a piece in the hand, a capture half done, a king castled before its rook.
//!
//! What may lie between two positions follows from how pieces move: each square a move changes
//! shows its old content, its new content or, where a piece replaces another, nothing (the
//! captured piece taken off first); and no in-between board shows more pieces of a kind than
//! the positions on either side of it (a piece is in one place at a time).

use std::sync::Arc;

use shakmaty::{Bitboard, Board, Chess, Move, Piece, Position, Square};

/// One decoded move in a history.
#[derive(Debug)]
pub struct Step {
    /// The move.
    pub mv: Move,
    /// Whether it is not a legal move of the position before it (Article 7.5).
    pub illegal: bool,
    /// When the board first showed the move begun (a piece lifted), or completed if no
    /// in-between state was seen.
    pub began: f64,
    /// When the board first showed the move completed.
    pub t: f64,
    /// No hand was seen over the board for seconds then: the piece had been let go.
    pub bare: bool,
    /// The position before the move.
    pub before: Chess,
    /// The history before it.
    pub prev: Option<Arc<Step>>,
    /// How many moves the history holds, this one included.
    pub depth: usize,
}

impl Step {
    /// The move as the decoder says it, with its confidence `conf`.
    pub fn decoded(&self, conf: f32) -> super::DecodedMove {
        super::DecodedMove { mv: self.mv, before: self.before.clone(), illegal: self.illegal, began: self.began, t: self.t, released: self.bare.then_some(self.t), conf }
    }

    /// The step at `depth` in this history (1 = the first move), if the history is that long.
    pub fn at(self: &Arc<Step>, depth: usize) -> Option<Arc<Step>> {
        let mut step = self.clone();
        while step.depth > depth {
            step = step.prev.clone()?;
        }
        (step.depth == depth).then_some(step)
    }
}

/// The legal moves of `pos`. After an illegal move that left a king in check (see
/// [`Transition::illegal`]) no move takes that king: the game goes on, as it does at the board
/// until someone notices.
pub fn moves(pos: &Chess) -> Vec<Transition> {
    pos.legal_moves().into_iter().filter(|m| m.capture() != Some(shakmaty::Role::King)).map(|m| Transition::legal(pos, m)).collect()
}

/// A square a move changes: its content before and after.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Change {
    /// The square.
    pub sq: Square,
    /// What stood there before the move.
    pub old: Option<Piece>,
    /// What stands there after it.
    pub new: Option<Piece>,
}

/// A move of a position, with what it changes.
#[derive(Clone, Debug)]
pub struct Transition {
    /// The move.
    pub mv: Move,
    /// Not a legal move of the position.
    pub illegal: bool,
    /// The squares it changes (two to four).
    pub changes: Vec<Change>,
    /// The position after it.
    pub after: Chess,
}

impl Transition {
    /// The legal move `mv` of `pos`.
    pub fn legal(pos: &Chess, mv: Move) -> Transition {
        let mut after = pos.clone();
        after.play_unchecked(mv);
        Transition { mv, illegal: false, changes: changes(pos.board(), after.board()), after }
    }

    /// The piece on `from` moved to `to` against the rules (a capture if a piece stood there),
    /// the other side to move after it; `None` if no position can follow (no piece on `from`).
    /// Where the piece moves as its kind moves, the move only leaves the mover's king in check
    /// ([`Transition::in_check`]).
    pub fn illegal(pos: &Chess, from: Square, to: Square) -> Option<Transition> {
        let piece = pos.board().piece_at(from)?;
        let capture = pos.board().role_at(to);
        if piece.color != pos.turn() || capture == Some(shakmaty::Role::King) || pos.board().by_color(piece.color).contains(to) {
            return None;
        }
        // Played as the board shows it: the position may leave the mover's king in check, which
        // no legal position does (a `Setup` of it is refused), so it is reached by playing.
        let mv = Move::Normal { role: piece.role, from, capture, to, promotion: None };
        let mut after = pos.clone();
        after.play_unchecked(mv);
        Some(Transition { mv, illegal: true, changes: changes(pos.board(), after.board()), after })
    }

    /// The illegal move of `pos` that leaves `board` (one of the mover's pieces moved, or
    /// castling), if there is one.
    pub fn relocation(pos: &Chess, board: &Board) -> Option<Transition> {
        let ours = pos.board().by_color(pos.turn());
        let gone = ours & !board.by_color(pos.turn());
        let came = board.by_color(pos.turn()) & !ours;
        let moved = gone.into_iter().flat_map(|from| came.into_iter().filter_map(move |to| Transition::illegal(pos, from, to)));
        let castled = pos.board().king_of(pos.turn()).into_iter().flat_map(|king| (pos.castles().castling_rights() & ours).into_iter().filter_map(move |rook| Transition::illegal_castle(pos, king, rook)));
        moved.chain(castled).find(|tr| tr.after.board() == board)
    }

    /// Castling against the rules: out of, through or into check (the king and the rook on
    /// their squares, the squares between them empty, the right not lost); `None` where the
    /// king and the rook cannot castle so at all.
    pub fn illegal_castle(pos: &Chess, king: Square, rook: Square) -> Option<Transition> {
        let side = if rook > king { shakmaty::CastlingSide::KingSide } else { shakmaty::CastlingSide::QueenSide };
        let turn = pos.turn();
        let castles = pos.castles();
        let board = pos.board();
        let placed = board.piece_at(king) == Some(turn.king()) && board.piece_at(rook) == Some(turn.rook()) && castles.rook(turn, side) == Some(rook);
        let path = castles.path(turn, side);
        if !placed || (path & board.occupied()).any() {
            return None;
        }
        let mv = Move::Castle { king, rook };
        let mut after = pos.clone();
        after.play_unchecked(mv);
        Some(Transition { mv, illegal: true, changes: changes(pos.board(), after.board()), after })
    }

    /// Whether this illegal move moves its piece as its kind moves (see [`as_its_kind`]).
    pub fn in_check(&self, before: &Chess) -> bool {
        as_its_kind(self.mv, before)
    }

    /// The squares of the move.
    pub fn squares(&self) -> Bitboard {
        self.changes.iter().map(|c| c.sq).collect()
    }

    /// Whether `shown`, which differs from the position before the move on `diff`, is a state
    /// in the middle of this move: every square that differs is one the move changes, showing
    /// its new content or nothing (or, on a promotion's square, the pawn).
    pub fn explains(&self, shown: &Board, diff: Bitboard) -> bool {
        let pawn = self.mv.promotion().map(|_| shakmaty::Role::Pawn.of(self.after.turn().other()));
        diff.into_iter().all(|sq| {
            let here = shown.piece_at(sq);
            self.changes.iter().any(|c| c.sq == sq && (here == c.new || here.is_none() || (sq == self.mv.to() && here == pawn && pawn.is_some())))
        })
    }

    /// The boards between `before` and the move's end: each changed square old, new or empty
    /// (and a promotion's square the pawn, set there before it is exchanged), neither end
    /// itself, none with more pieces of a kind than both ends. Each comes with the changes it
    /// makes to `before` (square and content).
    pub fn between(&self, before: &Board) -> Vec<Vec<(Square, Option<Piece>)>> {
        let pawn = self.mv.promotion().map(|_| shakmaty::Role::Pawn.of(self.after.turn().other()));
        let options: Vec<Vec<Option<Piece>>> = self
            .changes
            .iter()
            .map(|c| {
                let mut o = vec![c.old, c.new];
                if c.old.is_some() && c.new.is_some() {
                    o.push(None);
                }
                if c.sq == self.mv.to() && pawn.is_some() {
                    o.push(pawn);
                }
                o
            })
            .collect();
        let total: usize = options.iter().map(Vec::len).product();
        let mut out = Vec::new();
        for mut code in 0..total {
            let mut edits = Vec::with_capacity(options.len());
            let (mut old, mut new) = (true, true);
            for (c, o) in self.changes.iter().zip(&options) {
                let content = o[code % o.len()];
                code /= o.len();
                old &= content == c.old;
                new &= content == c.new;
                if content != c.old {
                    edits.push((c.sq, content));
                }
            }
            if old || new || !self.possible(before, &edits) {
                continue;
            }
            out.push(edits);
        }
        out
    }

    /// No piece appears more often than before and after the move.
    fn possible(&self, before: &Board, edits: &[(Square, Option<Piece>)]) -> bool {
        let shown = edited(before, edits);
        edits.iter().filter_map(|&(_, p)| p).all(|piece| {
            let count = |b: &Board| b.by_piece(piece).count();
            count(&shown) <= count(before).max(count(self.after.board()))
        })
    }
}

/// Whether `mv`, a move of `before` that is not legal there, moves its piece as its kind
/// moves (castling included), so that it breaks only the rule on the king: a move made in
/// check that does not meet it, a pinned piece moved, the king moved into check or castled
/// through it (3.9, 3.8.2).
pub fn as_its_kind(mv: Move, before: &Chess) -> bool {
    let board = before.board();
    match mv {
        Move::Castle { .. } => true,
        Move::Normal { role: shakmaty::Role::Pawn, from, to, capture, .. } => {
            let turn = before.turn();
            let ahead = |sq: Square| sq.offset(if turn == shakmaty::Color::White { 8 } else { -8 });
            let start = from.rank() == turn.relative_rank(shakmaty::Rank::Second);
            match capture {
                Some(_) => shakmaty::attacks::pawn_attacks(turn, from).contains(to),
                None => ahead(from) == Some(to) || (start && ahead(from).is_some_and(|one| board.piece_at(one).is_none() && ahead(one) == Some(to))),
            }
        }
        Move::Normal { from, to, .. } => board.attacks_from(from).contains(to),
        _ => false,
    }
}

/// The position after `mv` in `before`; an illegal move (see [`Transition::illegal`]) leaves
/// its piece where it was set, the other side to move.
pub fn after(before: &Chess, mv: Move, illegal: bool) -> Chess {
    if illegal
        && !matches!(mv, Move::Castle { .. })
        && let Some(tr) = Transition::illegal(before, mv.from().unwrap_or(mv.to()), mv.to())
    {
        return tr.after;
    }
    let mut after = before.clone();
    after.play_unchecked(mv);
    after
}

/// `board` with each square of `edits` holding its piece, or nothing.
fn edited(board: &Board, edits: &[(Square, Option<Piece>)]) -> Board {
    let mut out = board.clone();
    for &(sq, p) in edits {
        match p {
            Some(p) => out.set_piece_at(sq, p),
            None => out.discard_piece_at(sq),
        }
    }
    out
}

/// The squares that differ between two boards, with their contents.
pub fn changes(before: &Board, after: &Board) -> Vec<Change> {
    crate::rules::differing(before, after).into_iter().map(|sq| Change { sq, old: before.piece_at(sq), new: after.piece_at(sq) }).collect()
}

/// A hypothesis: a history and what the board shows now.
#[derive(Clone, Debug)]
pub struct Node {
    /// The position the history reaches.
    pub pos: Chess,
    /// What the board shows: `pos`'s board, or a state in the middle of the next move.
    pub shown: Board,
    /// The history's cost so far, in nats.
    pub cost: f64,
    /// The last move of the history.
    pub hist: Option<Arc<Step>>,
    /// When the move under way was first seen begun (for in-between states).
    pub began: f64,
}

impl Node {
    /// The start of a game from `pos`.
    pub fn start(pos: Chess) -> Node {
        Node { shown: pos.board().clone(), pos, cost: 0.0, hist: None, began: 0.0 }
    }

    /// Whether the board shows the position itself, no move under way.
    pub fn quiet(&self) -> bool {
        &self.shown == self.pos.board()
    }

    /// The squares where the board shown differs from the position.
    pub fn diff(&self) -> Bitboard {
        crate::rules::differing(&self.shown, self.pos.board())
    }

    /// How many moves the history holds.
    pub fn depth(&self) -> usize {
        self.hist.as_ref().map_or(0, |s| s.depth)
    }

    /// A key that is equal for hypotheses that can no longer be told apart.
    pub fn key(&self) -> (u64, u64) {
        use std::hash::{Hash, Hasher};
        let pos: shakmaty::zobrist::Zobrist64 = self.pos.zobrist_hash(shakmaty::EnPassantMode::Legal);
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.shown.hash(&mut h);
        (pos.0, h.finish())
    }

    /// The node after `t`: the move done, its position shown, at `t`.
    pub fn complete(&self, tr: &Transition, cost: f64, t: f64, bare: bool) -> Node {
        let began = if self.quiet() { t } else { self.began };
        let step = Step { mv: tr.mv, illegal: tr.illegal, began, t, bare, before: self.pos.clone(), prev: self.hist.clone(), depth: self.depth() + 1 };
        Node { pos: tr.after.clone(), shown: tr.after.board().clone(), cost, hist: Some(Arc::new(step)), began: t }
    }

    /// The node showing `edits` to its position's board, the move begun at `began`.
    pub fn between(&self, edits: &[(Square, Option<Piece>)], cost: f64, began: f64) -> Node {
        Node { pos: self.pos.clone(), shown: edited(self.pos.board(), edits), cost, hist: self.hist.clone(), began }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::fen::Fen;
    use shakmaty::{CastlingMode, Color, Role};

    fn pos(fen: &str) -> Chess {
        fen.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap()
    }

    #[test]
    fn a_quiet_move_passes_through_the_piece_in_hand() {
        let p = Chess::default();
        let tr = Transition::legal(&p, Move::Normal { role: Role::Pawn, from: Square::E2, capture: None, to: Square::E4, promotion: None });
        assert_eq!(tr.changes.len(), 2);
        // e2 empty, e4 still empty: the pawn in the hand. (e2 full and e4 full: two pawns.)
        assert_eq!(tr.between(p.board()), vec![vec![(Square::E2, None)]]);
    }

    #[test]
    fn a_capture_may_take_the_captured_piece_off_first() {
        let p = pos("rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2");
        let tr = Transition::legal(&p, Move::Normal { role: Role::Pawn, from: Square::E4, capture: Some(Role::Pawn), to: Square::D5, promotion: None });
        let mut between = tr.between(p.board());
        between.sort_by_key(|e| e.len());
        assert_eq!(between, vec![vec![(Square::E4, None)], vec![(Square::D5, None)], vec![(Square::E4, None), (Square::D5, None)]]);
    }

    #[test]
    fn castling_shows_the_king_or_the_rook_moved_first() {
        let p = pos("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1");
        let tr = Transition::legal(&p, Move::Castle { king: Square::E1, rook: Square::H1 });
        let between = tr.between(p.board());
        assert!(between.contains(&vec![(Square::E1, None), (Square::G1, Some(Color::White.king()))]));
        assert!(between.contains(&vec![(Square::F1, Some(Color::White.rook())), (Square::H1, None)]));
        // Never two kings.
        assert!(!between.iter().any(|e| e.contains(&(Square::G1, Some(Color::White.king()))) && !e.contains(&(Square::E1, None))));
    }

    #[test]
    fn an_illegal_move_leads_on_with_the_other_side_to_move() {
        let p = Chess::default();
        let tr = Transition::illegal(&p, Square::G1, Square::G3).unwrap();
        assert!(tr.illegal);
        assert_eq!(tr.after.turn(), Color::Black);
        assert_eq!(tr.after.board().piece_at(Square::G3), Some(Color::White.knight()));
        assert!(Transition::illegal(&p, Square::E4, Square::E5).is_none());
    }

    #[test]
    fn an_illegal_move_in_the_pieces_own_pattern_only_breaks_the_rule_on_the_king() {
        // White in check from the bishop on b4: a2-a3, a2-a4 and Ng1-f3 leave it so; Ng1-g3 is
        // no knight's move, a2-a5 no pawn's.
        let p = pos("rnbqk1nr/pppp1ppp/8/4p3/1b1P4/8/PPP1PPPP/RNBQKBNR w KQkq - 1 3");
        assert!(Transition::illegal(&p, Square::A2, Square::A3).unwrap().in_check(&p));
        assert!(Transition::illegal(&p, Square::A2, Square::A4).unwrap().in_check(&p));
        assert!(!Transition::illegal(&p, Square::A2, Square::A5).unwrap().in_check(&p));
        assert!(Transition::illegal(&p, Square::G1, Square::F3).unwrap().in_check(&p));
        assert!(!Transition::illegal(&p, Square::G1, Square::G3).unwrap().in_check(&p));
        // Castling through f1, which the bishop on c4 attacks; not where a piece is in the way.
        let p = pos("r3k2r/8/8/8/2b5/8/8/R3K2R w KQkq - 0 1");
        let tr = Transition::illegal_castle(&p, Square::E1, Square::H1).unwrap();
        assert!(tr.illegal && tr.in_check(&p));
        assert_eq!(tr.after.board().piece_at(Square::G1), Some(Color::White.king()));
        assert_eq!(tr.after.board().piece_at(Square::F1), Some(Color::White.rook()));
        assert_eq!(after(&p, tr.mv, true).board(), tr.after.board());
        let blocked = pos("r3k2r/8/8/8/2b5/8/8/R3KN1R w KQkq - 0 1");
        assert!(Transition::illegal_castle(&blocked, Square::E1, Square::H1).is_none());
    }

    #[test]
    fn a_state_between_explains_only_its_own_move() {
        let p = Chess::default();
        let e4 = Transition::legal(&p, Move::Normal { role: Role::Pawn, from: Square::E2, capture: None, to: Square::E4, promotion: None });
        let d4 = Transition::legal(&p, Move::Normal { role: Role::Pawn, from: Square::D2, capture: None, to: Square::D4, promotion: None });
        let node = Node::start(p.clone()).between(&[(Square::E2, None)], 0.0, 0.0);
        assert!(e4.explains(&node.shown, node.diff()));
        assert!(!d4.explains(&node.shown, node.diff()));
    }
}
