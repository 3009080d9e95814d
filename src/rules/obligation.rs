//! Which moves the Laws still allow, given the pieces touched and released so far in a move:
//! Articles 4.3 (touched pieces), 4.4 (castling and promotion choice), 4.5, 4.7 and 4.7.2.
//! Pure functions of a position and the touches; no events, no time.

use shakmaty::{CastlingSide, Chess, Color, Move, MoveList, Piece, Position, Role, Square};

use super::record::Article;

/// A piece touched with the intention of moving or capturing it, identified by the square it
/// stood on when the move began.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Touched {
    /// Its square at the start of the move.
    pub origin: Square,
    /// The piece.
    pub piece: Piece,
    /// When it was first touched; equal times mean the order is unknown.
    pub t: f64,
}

/// What the Laws require of the player having the move.
#[derive(Clone, Debug, PartialEq)]
pub enum Obligation {
    /// Nothing was touched that binds the player: any legal move.
    Free,
    /// The Laws free the player explicitly (4.4.3 last sentence, 4.5): any legal move.
    Freed(Article),
    /// Only these moves are allowed, by this article.
    Only(Article, Vec<Move>),
}

impl Obligation {
    /// Whether `m` satisfies the obligation.
    pub fn allows(&self, m: Move) -> bool {
        match self {
            Obligation::Free | Obligation::Freed(_) => true,
            Obligation::Only(_, moves) => moves.contains(&m),
        }
    }

    /// The allowed moves, empty when any legal move is allowed.
    pub fn moves(&self) -> &[Move] {
        match self {
            Obligation::Only(_, moves) => moves,
            _ => &[],
        }
    }

    /// The article that binds, if any.
    pub fn article(&self) -> Option<Article> {
        match self {
            Obligation::Free => None,
            Obligation::Freed(a) | Obligation::Only(a, _) => Some(*a),
        }
    }
}

/// A commitment made by releasing a piece, or by a promotion piece touching its square.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Commitment {
    /// The king was released on its castling square (4.7.2).
    Castle(CastlingSide),
    /// A pawn was released on the last rank (4.7): it must promote there.
    PromotionSquare {
        /// The pawn's square when the move began.
        from: Square,
        /// The promotion square.
        to: Square,
    },
    /// A promotion piece touched the promotion square: the choice is final (4.4.4).
    PromotionPiece {
        /// The promotion square.
        to: Square,
        /// The piece chosen.
        role: Role,
    },
}

/// The square whose piece `m` captures (differs from `m.to()` for en passant).
pub fn captured_square(m: Move) -> Option<Square> {
    match m {
        Move::EnPassant { from, to } => Some(Square::from_coords(to.file(), from.rank())),
        Move::Normal { capture: Some(_), to, .. } => Some(to),
        _ => None,
    }
}

fn moves_from(legal: &MoveList, sq: Square) -> Vec<Move> {
    legal.iter().copied().filter(|m| m.from() == Some(sq)).collect()
}

fn captures_of(legal: &MoveList, sq: Square) -> Vec<Move> {
    legal.iter().copied().filter(|m| captured_square(*m) == Some(sq)).collect()
}

/// The castling side whose rook stands on `sq` with castling rights, if any.
fn castling_rook_side(pos: &Chess, color: Color, sq: Square) -> Option<CastlingSide> {
    CastlingSide::ALL.into_iter().find(|&side| pos.castles().rook(color, side) == Some(sq))
}

/// What one own touched piece obliges, with 4.4 applied; `None` when it cannot move (4.5).
fn own_piece(pos: &Chess, legal: &MoveList, touches: &[Touched], i: usize) -> Option<Obligation> {
    let me = pos.turn();
    let this = touches[i];
    match this.piece.role {
        Role::King => {
            // A rook touched with or after the king: castling on that side (4.4.1) or, if that is
            // illegal, another king move (4.4.3).
            let side = touches
                .iter()
                .filter(|t| t.piece.color == me && t.t >= this.t && t.piece.role == Role::Rook)
                .find_map(|t| castling_rook_side(pos, me, t.origin));
            let mut king_moves = moves_from(legal, this.origin);
            if let Some(side) = side {
                if let Some(&castle) = king_moves.iter().find(|m| m.castling_side() == Some(side)) {
                    return Some(Obligation::Only(Article::A4_4_1, vec![castle]));
                }
                return Some(if king_moves.is_empty() {
                    Obligation::Freed(Article::A4_4_3)
                } else {
                    Obligation::Only(Article::A4_4_3, king_moves)
                });
            }
            // A castling rook touched before the king bars castling on that side (4.4.2).
            let barred: Vec<CastlingSide> = touches
                .iter()
                .filter(|t| t.piece.color == me && t.t < this.t && t.piece.role == Role::Rook)
                .filter_map(|t| castling_rook_side(pos, me, t.origin))
                .collect();
            king_moves.retain(|m| m.castling_side().is_none_or(|s| !barred.contains(&s)));
            let article = if barred.is_empty() { Article::A4_3_1 } else { Article::A4_4_2 };
            (!king_moves.is_empty()).then_some(Obligation::Only(article, king_moves))
        }
        Role::Rook
            if castling_rook_side(pos, me, this.origin).is_some()
                && touches.iter().any(|t| t.piece == Piece { color: me, role: Role::King } && t.t > this.t) =>
        {
            let moves = moves_from(legal, this.origin);
            (!moves.is_empty()).then_some(Obligation::Only(Article::A4_4_2, moves))
        }
        _ => {
            let moves = moves_from(legal, this.origin);
            (!moves.is_empty()).then_some(Obligation::Only(Article::A4_3_1, moves))
        }
    }
}

/// What one opponent's touched piece obliges: capture it (4.3.2), or nothing if it cannot be.
fn opponent_piece(legal: &MoveList, this: Touched) -> Option<Obligation> {
    let moves = captures_of(legal, this.origin);
    (!moves.is_empty()).then_some(Obligation::Only(Article::A4_3_2, moves))
}

/// Groups of touch indices with equal time (order unknown), own pieces first within a time
/// (4.3.3, last sentence); `touches` must be in time order.
fn groups(touches: &[Touched], me: Color) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut i = 0;
    while i < touches.len() {
        let mut j = i;
        while j < touches.len() && touches[j].t == touches[i].t {
            j += 1;
        }
        let (own, opp): (Vec<usize>, Vec<usize>) = (i..j).partition(|&k| touches[k].piece.color == me);
        if !own.is_empty() {
            out.push(own);
        }
        if !opp.is_empty() {
            out.push(opp);
        }
        i = j;
    }
    out
}

/// The first group in `order` whose pieces oblige something; a group's pieces were touched at
/// once, so the player may satisfy any of them (the benefit of the doubt).
fn first_binding(
    pos: &Chess,
    legal: &MoveList,
    touches: &[Touched],
    order: &[Vec<usize>],
) -> Obligation {
    let me = pos.turn();
    for group in order {
        // A king and a castling rook touched together: the king's rule (4.4.1/4.4.3) covers both.
        let has_king = group.iter().any(|&k| touches[k].piece.role == Role::King && touches[k].piece.color == me);
        let mut found: Option<Obligation> = None;
        for &k in group {
            let this = touches[k];
            let skip_rook = has_king && this.piece.role == Role::Rook && castling_rook_side(pos, me, this.origin).is_some();
            if skip_rook {
                continue;
            }
            let ob = if this.piece.color == me { own_piece(pos, legal, touches, k) } else { opponent_piece(legal, this) };
            found = match (found, ob) {
                (None, ob) => ob,
                (Some(Obligation::Only(a, mut xs)), Some(Obligation::Only(_, ys))) => {
                    for y in ys {
                        if !xs.contains(&y) {
                            xs.push(y);
                        }
                    }
                    Some(Obligation::Only(a, xs))
                }
                (Some(Obligation::Only(a, xs)), _) => Some(Obligation::Only(a, xs)),
                (Some(_), Some(Obligation::Only(a, ys))) => Some(Obligation::Only(a, ys)),
                (kept, _) => kept,
            };
        }
        if let Some(ob) = found {
            return ob;
        }
    }
    Obligation::Free
}

/// What Article 4.3 (with 4.4 and 4.5) requires after `touches`, in time order.
pub fn from_touches(pos: &Chess, touches: &[Touched]) -> Obligation {
    if touches.is_empty() {
        return Obligation::Free;
    }
    let me = pos.turn();
    let legal = pos.legal_moves();
    let order = groups(touches, me);
    let first_own = order.iter().find(|g| touches[g[0]].piece.color == me);
    let first_opp = order.iter().find(|g| touches[g[0]].piece.color != me);
    let (Some(first_own), Some(first_opp)) = (first_own, first_opp) else {
        // One colour only: 4.3.1 or 4.3.2, the first touched piece that can be moved or captured.
        let ob = first_binding(pos, &legal, touches, &order);
        return if matches!(ob, Obligation::Free) { Obligation::Freed(Article::A4_5) } else { ob };
    };
    // Both colours (4.3.3): the first touched opponent's piece captured by the first touched own
    // piece; if that is illegal, the first touched piece that can be moved or captured.
    let pairs: Vec<Move> = legal
        .iter()
        .copied()
        .filter(|m| {
            m.from().is_some_and(|f| first_own.iter().any(|&k| touches[k].origin == f))
                && captured_square(*m).is_some_and(|c| first_opp.iter().any(|&k| touches[k].origin == c))
        })
        .collect();
    if !pairs.is_empty() {
        return Obligation::Only(Article::A4_3_3, pairs);
    }
    match first_binding(pos, &legal, touches, &order) {
        Obligation::Only(a, moves) => {
            let a = if matches!(a, Article::A4_3_1 | Article::A4_3_2) { Article::A4_3_3 } else { a };
            Obligation::Only(a, moves)
        }
        Obligation::Free => Obligation::Freed(Article::A4_5),
        freed => freed,
    }
}

/// Narrows `ob` by the commitments made so far, in the order they were made: a commitment
/// replaces a free obligation, narrows a compatible one (and is then the article cited, being
/// the more specific), and yields to an incompatible touch obligation (the first touch binds).
pub fn with_commitments(pos: &Chess, mut ob: Obligation, commitments: &[Commitment]) -> Obligation {
    if commitments.is_empty() {
        return ob;
    }
    let legal = pos.legal_moves();
    let me = pos.turn();
    for &c in commitments {
        let (article, allowed): (Article, Vec<Move>) = match c {
            Commitment::Castle(side) => {
                let Some(king) = pos.board().king_of(me) else { continue };
                let king_moves = moves_from(&legal, king);
                match king_moves.iter().find(|m| m.castling_side() == Some(side)) {
                    Some(&castle) => (Article::A4_7_2, vec![castle]),
                    None if king_moves.is_empty() => {
                        if matches!(ob, Obligation::Free) {
                            ob = Obligation::Freed(Article::A4_7_2);
                        }
                        continue;
                    }
                    None => (Article::A4_7_2, king_moves),
                }
            }
            Commitment::PromotionSquare { from, to } => (
                Article::A4_7,
                legal.iter().copied().filter(|m| m.from() == Some(from) && m.to() == to && m.is_promotion()).collect(),
            ),
            Commitment::PromotionPiece { to, role } => {
                let keep = |m: &Move| !(m.to() == to && m.is_promotion()) || m.promotion() == Some(role);
                ob = match ob {
                    Obligation::Only(a, moves) => {
                        let narrowed: Vec<Move> = moves.iter().copied().filter(keep).collect();
                        if narrowed.len() == moves.len() || narrowed.is_empty() {
                            Obligation::Only(a, moves)
                        } else {
                            Obligation::Only(Article::A4_4_4, narrowed)
                        }
                    }
                    other => {
                        let chosen: Vec<Move> =
                            legal.iter().copied().filter(|m| m.to() == to && m.promotion() == Some(role)).collect();
                        if chosen.is_empty() { other } else { Obligation::Only(Article::A4_4_4, chosen) }
                    }
                };
                continue;
            }
        };
        if allowed.is_empty() {
            continue;
        }
        ob = match ob {
            Obligation::Free | Obligation::Freed(_) => Obligation::Only(article, allowed),
            Obligation::Only(a, moves) => {
                let both: Vec<Move> = moves.iter().copied().filter(|m| allowed.contains(m)).collect();
                if both.is_empty() {
                    Obligation::Only(a, moves)
                } else {
                    Obligation::Only(article, both)
                }
            }
        };
    }
    ob
}

#[cfg(test)]
mod tests {
    use shakmaty::fen::Fen;

    use super::*;

    fn pos(fen: &str) -> Chess {
        fen.parse::<Fen>().unwrap().into_position(shakmaty::CastlingMode::Standard).unwrap()
    }

    fn touched(pos: &Chess, squares: &[(&str, f64)]) -> Vec<Touched> {
        squares
            .iter()
            .map(|&(s, t)| {
                let origin: Square = s.parse().unwrap();
                Touched { origin, piece: pos.board().piece_at(origin).unwrap(), t }
            })
            .collect()
    }

    fn ucis(ob: &Obligation) -> Vec<String> {
        let mut v: Vec<String> = ob.moves().iter().map(|&m| super::super::record::uci(m)).collect();
        v.sort();
        v
    }

    #[test]
    fn simultaneous_own_and_opponent_counts_own_first() {
        let p = pos("rnbqkb1r/pppppppp/8/8/4n3/3P4/PPP1PPPP/RNBQKBNR w KQkq - 1 3");
        let ob = from_touches(&p, &touched(&p, &[("d1", 1.0), ("e4", 1.0)]));
        assert_eq!(ob.article(), Some(Article::A4_3_3));
        assert_eq!(ucis(&ob), ["d1d2"]);
        let ob = from_touches(&p, &touched(&p, &[("e4", 1.0), ("d1", 2.0)]));
        assert_eq!(ucis(&ob), ["d3e4"]);
    }

    #[test]
    fn two_own_pieces_at_once_allow_either() {
        let p = Chess::default();
        let ob = from_touches(&p, &touched(&p, &[("g1", 1.0), ("b1", 1.0)]));
        assert_eq!(ucis(&ob), ["b1a3", "b1c3", "g1f3", "g1h3"]);
    }

    #[test]
    fn promotion_piece_narrows_only_that_square() {
        let p = pos("5b1k/4P3/8/2K5/8/8/8/8 w - - 0 1");
        let ob = from_touches(&p, &touched(&p, &[("e7", 1.0)]));
        let ob = with_commitments(&p, ob, &[Commitment::PromotionPiece { to: "e8".parse().unwrap(), role: Role::Queen }]);
        assert_eq!(ucis(&ob), ["e7f8b", "e7f8n", "e7f8q", "e7f8r"]);
    }
}
