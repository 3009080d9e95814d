//! The starting position read from the first quiet readings: `--fen auto` chooses between the
//! standard start and the model's own best board by the decoder's scoring; a `--fen` given is
//! checked against what the camera sees, and where the two disagree on a square's kind (empty,
//! White, Black) the board is followed.

use shakmaty::{Bitboard, Board, CastlingMode, Chess, FromSetup, Piece, Position, PositionError, Setup, Square};

use super::observe::{Evidence, Params};
use crate::detect::Reading;
use crate::detect::reading::{CLASSES, class_piece};

/// Which starting position was taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The position asked for (the standard start, or `--fen`).
    Asked,
    /// The position asked for, with the squares the camera plainly sees otherwise changed to
    /// what it sees.
    Board,
}

/// The starting position as read.
#[derive(Clone, Debug)]
pub struct Start {
    /// The position the game is decoded from.
    pub pos: Chess,
    /// Which it is.
    pub origin: Origin,
    /// Squares where the position asked for and the readings disagree on the kind.
    pub disagree: Vec<Square>,
    /// How much better, in nats, the board taken explains the readings than the other.
    pub margin: f64,
    /// How many independent looks at the board the readings were ([`Evidence::weight`]
    /// summed): one for a photo, five for a second of video.
    pub looks: f64,
}

/// Independent looks at the start (a second of video gives five) from which a square read
/// otherwise than the position asked for is one the camera misreads ([`Start::misread`]).
const MISREAD_LOOKS: f64 = 3.0;

/// A square whose kind the readings contradict by this much (nats, summed over the readings)
/// disagrees with the position asked for.
const DISAGREE: f64 = 3.0;

/// The board is followed only where it disagrees with the position asked for on this many
/// squares or more: one to three squares are as likely a shadow or a piece the model does not
/// know (the decoder outvotes such misreads as the game goes on) as a position mistyped; a
/// game already under way differs on many.
const FOLLOW: usize = 4;

impl Start {
    /// The squares the camera misreads: read otherwise than the position asked for, which was
    /// kept, look after look (one photo may only have caught a shadow passing). The decoder
    /// trusts them less (`Decoder::distrust`).
    pub fn misread(&self) -> Bitboard {
        match self.origin {
            Origin::Asked if self.looks >= MISREAD_LOOKS => self.disagree.iter().copied().collect(),
            _ => Bitboard::EMPTY,
        }
    }
}

/// Reads the start from `readings` (the first frames, in order), against `asked`; squares a hand
/// covers count for little. `None` if there are no readings.
pub fn read(readings: &[Reading], asked: &Chess, params: &Params) -> Option<Start> {
    let mut cost = [[0.0f64; CLASSES]; 64];
    let mut last = f64::NEG_INFINITY;
    let mut looks = 0.0;
    for r in readings {
        let ev = Evidence::new(r, r.t - last, params);
        last = r.t;
        looks += ev.weight;
        for sq in Square::ALL {
            for (class, c) in cost[sq as usize].iter_mut().enumerate() {
                *c += ev.square(sq, class_piece(class));
            }
        }
    }
    if readings.is_empty() {
        return None;
    }
    let of = |board: &Board| -> f64 { Square::ALL.iter().map(|&sq| cost[sq as usize][crate::detect::reading::piece_class(board.piece_at(sq))]).sum() };
    let kind = |p: Option<Piece>| p.map(|p| p.color);
    // Where the kind asked for costs clearly more than the best kind, the best piece of that kind.
    let mut seen = asked.board().clone();
    let mut disagree = Vec::new();
    for sq in Square::ALL {
        let c = &cost[sq as usize];
        let best = (0..CLASSES).min_by(|&a, &b| c[a].total_cmp(&c[b])).unwrap_or(0);
        let here = asked.board().piece_at(sq);
        let best_of_kind = (0..CLASSES).filter(|&k| kind(class_piece(k)) == kind(here)).map(|k| c[k]).fold(f64::INFINITY, f64::min);
        if kind(class_piece(best)) != kind(here) && best_of_kind - c[best] > DISAGREE {
            disagree.push(sq);
            match class_piece(best) {
                Some(p) => seen.set_piece_at(sq, p),
                None => seen.discard_piece_at(sq),
            }
        }
    }
    let margin = of(asked.board()) - of(&seen);
    let followed = (disagree.len() >= FOLLOW).then(|| position(asked, seen)).flatten();
    Some(match followed {
        Some(pos) => Start { pos, origin: Origin::Board, disagree, margin, looks },
        None => Start { pos: asked.clone(), origin: Origin::Asked, disagree, margin: -margin, looks },
    })
}

/// `asked` with its board replaced by `board`, castling rights kept where king and rook still
/// stand at home; `None` if that is no position (a king missing, say).
fn position(asked: &Chess, board: Board) -> Option<Chess> {
    let mut setup: Setup = asked.to_setup(shakmaty::EnPassantMode::Legal);
    setup.board = board;
    setup.ep_square = None;
    Chess::from_setup(setup, CastlingMode::Standard).or_else(PositionError::ignore_invalid_castling_rights).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::observe::tests::reading_of;

    #[test]
    fn the_standard_start_is_kept_when_the_camera_shows_it() {
        let pos = Chess::default();
        let readings: Vec<Reading> = (0..5).map(|i| reading_of(pos.board(), 0.8, 0.2 * i as f64)).collect();
        let start = read(&readings, &pos, &Params::default()).unwrap();
        assert_eq!(start.origin, Origin::Asked);
        assert!(start.disagree.is_empty());
        assert_eq!(start.pos, pos);
    }

    #[test]
    fn a_fen_the_camera_contradicts_is_followed_where_it_plainly_differs() {
        let asked = Chess::default();
        let mut board = asked.board().clone();
        for (from, to) in [(Square::E2, Square::E4), (Square::E7, Square::E5)] {
            let piece = board.remove_piece_at(from).unwrap();
            board.set_piece_at(to, piece);
        }
        let readings: Vec<Reading> = (0..5).map(|i| reading_of(&board, 0.8, 0.2 * i as f64)).collect();
        let start = read(&readings, &asked, &Params::default()).unwrap();
        assert_eq!(start.origin, Origin::Board);
        assert_eq!(start.disagree, vec![Square::E2, Square::E4, Square::E5, Square::E7]);
        assert_eq!(start.pos.board(), &board);
        assert!(start.margin > 0.0);
    }

    #[test]
    fn a_square_or_two_read_otherwise_is_named_but_not_followed() {
        // A shadow on f2 and a bishop the model does not know on c1.
        let asked = Chess::default();
        let mut board = asked.board().clone();
        board.discard_piece_at(Square::F2);
        board.discard_piece_at(Square::C1);
        let readings: Vec<Reading> = (0..5).map(|i| reading_of(&board, 0.8, 0.2 * i as f64)).collect();
        let start = read(&readings, &asked, &Params::default()).unwrap();
        assert_eq!(start.origin, Origin::Asked);
        assert_eq!(start.disagree, vec![Square::C1, Square::F2]);
        assert_eq!(start.pos, asked);
    }
}
