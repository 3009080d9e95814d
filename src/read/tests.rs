//! The decoder on synthetic reading sequences whose probability tables are known exactly.

use shakmaty::fen::Fen;
use shakmaty::san::San;
use shakmaty::{Board, CastlingMode, Chess, Color, Move, Position, Square};

use super::*;
use crate::detect::reading::{CLASSES, piece_class};
use crate::detect::{HandMap, SquareReading};

/// Readings of a game, built frame by frame.
struct Film {
    readings: Vec<Reading>,
    t: f64,
    /// Probability of the shown class on each square.
    p: f32,
}

impl Film {
    fn new() -> Film {
        Film { readings: Vec::new(), t: 0.0, p: 0.9 }
    }

    /// `n` frames `dt` apart showing `board`, the squares in `covered` under a hand of `hand`'s.
    fn show(&mut self, board: &Board, n: usize, dt: f64, covered: &[Square], hand: Option<Color>) {
        for _ in 0..n {
            self.t += dt;
            let mut r = reading(board, self.p, self.t);
            for &sq in covered {
                r.squares[sq as usize].cover = 0.9;
                // Under the hand the model reads anything.
                r.squares[sq as usize].classes = [1.0 / CLASSES as f32; CLASSES];
            }
            if let Some(color) = hand {
                let cells = match color {
                    Color::White => &mut r.hands.white,
                    Color::Black => &mut r.hands.black,
                };
                cells[0] = 0.95;
            }
            self.readings.push(r);
        }
    }

    /// A move at video rate (20 fps): the hand over the piece, the piece lifted, carried, set
    /// down, the hand gone, then a second of the quiet board.
    fn play(&mut self, pos: &mut Chess, m: Move) {
        let before = pos.board().clone();
        let side = pos.turn();
        pos.play_unchecked(m);
        let after = pos.board().clone();
        let from = m.from().expect("a board move");
        self.show(&before, 4, 0.05, &[from], Some(side));
        let mut lifted = before.clone();
        lifted.discard_piece_at(from);
        if let Move::Castle { rook, .. } = m {
            lifted.discard_piece_at(rook);
        }
        self.show(&lifted, 6, 0.05, &[m.to()], Some(side));
        self.show(&after, 4, 0.05, &[m.to()], Some(side));
        self.show(&after, 20, 0.05, &[], None);
    }

    /// What the decoder says of these readings, each with the time of the reading it said it
    /// at (infinite for what it said at the end).
    fn said(&self, start: Chess, opts: Options) -> Vec<(Decoded, f64)> {
        let mut d = Decoder::new(start, opts);
        let mut said = Vec::new();
        let mut out = Vec::new();
        for r in &self.readings {
            d.push(r, &mut out);
            said.extend(out.drain(..).map(|o| (o, r.t)));
        }
        d.finish(&mut out);
        said.extend(out.into_iter().map(|o| (o, f64::INFINITY)));
        said
    }

    fn decode(&self, start: Chess, opts: Options) -> (Vec<DecodedMove>, Vec<String>) {
        let out = self.said(start, opts).into_iter().map(|(o, _)| o);
        let mut moves = Vec::new();
        let mut corrections = Vec::new();
        for o in out {
            match o {
                Decoded::Move(m) => moves.push(m),
                Decoded::Correction { text, .. } => corrections.push(text),
                Decoded::Unfinished { mv, .. } => moves.extend(mv),
                Decoded::Replaced { from, by, .. } => {
                    corrections.push(format!("taken back from move {}", from + 1));
                    moves.truncate(from);
                    moves.extend(by);
                }
            }
        }
        (moves, corrections)
    }
}

/// A reading that shows `board` with probability `p` on each square, no hand anywhere.
fn reading(board: &Board, p: f32, t: f64) -> Reading {
    let squares = std::array::from_fn(|i| {
        let class = piece_class(board.piece_at(Square::new(i as u32)));
        let rest = (1.0 - p) / (CLASSES - 1) as f32;
        SquareReading { classes: std::array::from_fn(|c| if c == class { p } else { rest }), cover: 0.0, contact: 0.0 }
    });
    Reading { frame: 0, t, squares, hands: HandMap { side: 18, cells_per_square: 2, margin: 1, white: vec![0.0; 324], black: vec![0.0; 324] } }
}

fn pos(fen: &str) -> Chess {
    fen.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap()
}

/// The moves of `sans` from `start`.
fn line(start: &Chess, sans: &str) -> Vec<Move> {
    let mut p = start.clone();
    sans.split_whitespace()
        .filter(|s| !s.ends_with('.'))
        .map(|s| {
            let m = s.parse::<San>().unwrap_or_else(|e| panic!("{s}: {e}")).to_move(&p).unwrap_or_else(|e| panic!("{s}: {e}"));
            p.play_unchecked(m);
            m
        })
        .collect()
}

fn ucis(moves: &[DecodedMove]) -> Vec<String> {
    moves.iter().map(|m| crate::rules::record::uci(m.mv)).collect()
}

/// A photo of `start` and one after each of `moves` but those `missed` says were never taken,
/// `dt` seconds apart.
fn photographed(start: &Chess, moves: &[Move], dt: f64, missed: impl Fn(usize) -> bool) -> Film {
    let mut film = Film::new();
    let mut p = start.clone();
    film.show(p.board(), 1, dt, &[], None);
    for (i, &m) in moves.iter().enumerate() {
        p.play_unchecked(m);
        if !missed(i + 1) {
            film.show(p.board(), 1, dt, &[], None);
        }
    }
    film
}

/// The moves read, in SAN, for a failure message.
fn sans(read: &[DecodedMove]) -> Vec<String> {
    read.iter().map(|m| san(&m.before, m.mv)).collect()
}

fn filmed(start: &Chess, moves: &[Move]) -> Film {
    let mut film = Film::new();
    film.show(start.board(), 10, 0.05, &[], None);
    let mut p = start.clone();
    for &m in moves {
        film.play(&mut p, m);
    }
    film
}

#[test]
fn each_kind_of_move_is_read_with_its_time() {
    let cases = [
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "e4 e5 Nf3 Nc6"),
        ("rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2", "exd5 Qxd5"),
        ("r3k2r/pppq1ppp/8/8/8/8/PPPQ1PPP/R3K2R w KQkq - 0 1", "O-O O-O-O"),
        ("r3k2r/pppq1ppp/8/8/8/8/PPPQ1PPP/R3K2R w KQkq - 0 1", "O-O-O O-O"),
        ("rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3", "exf6 Nxf6"),
        ("1r2k3/2P5/8/8/8/8/8/4K3 w - - 0 1", "cxb8=N+ Kd8"),
        ("4k3/2P5/8/8/8/8/8/4K3 w - - 0 1", "c8=Q+ Kf7"),
    ];
    for (fen, sans) in cases {
        let start = pos(fen);
        let moves = line(&start, sans);
        let film = filmed(&start, &moves);
        let (read, corrections) = film.decode(start.clone(), Options::default());
        assert_eq!(read.iter().map(|m| m.mv).collect::<Vec<_>>(), moves, "{fen} {sans}");
        assert!(corrections.is_empty(), "{corrections:?}");
        assert!(read.iter().all(|m| !m.illegal && m.conf > 0.9), "{read:?}");
        // Dated when the move was seen done, after it was seen begun.
        for (i, m) in read.iter().enumerate() {
            let lifted = 0.5 + 1.7 * i as f64 + 0.2;
            assert!(m.began >= lifted - 0.01 && m.began <= m.t && m.t <= lifted + 0.6, "{sans} move {i}: began {} t {} (lifted {lifted})", m.began, m.t);
        }
    }
}

#[test]
fn a_move_goes_out_once_it_has_led_long_enough_and_the_hand_has_left() {
    let start = Chess::default();
    let moves = line(&start, "e4");
    let film = filmed(&start, &moves);
    let mut d = Decoder::new(start, Options::with_lag(Options::LIVE_LAG_S));
    let mut out = Vec::new();
    let mut sent_at = None;
    for r in &film.readings {
        d.push(r, &mut out);
        if sent_at.is_none() && !out.is_empty() {
            sent_at = Some(r.t);
        }
    }
    // The pawn is set down at 1.0 s and the hand leaves at 1.2 s: out within 300 ms of that.
    let sent_at = sent_at.expect("the move went out before the end");
    assert!((1.2..=1.5).contains(&sent_at), "{sent_at}");
}

#[test]
fn live_the_decoder_is_undecided_while_a_move_leads_that_has_not_gone_out() {
    let start = Chess::default();
    let moves = line(&start, "e4");
    let film = filmed(&start, &moves);
    let mut d = Decoder::new(start, Options::with_lag(Options::LIVE_LAG_S));
    let mut out = Vec::new();
    let mut undecided = Vec::new();
    for r in &film.readings {
        d.push(r, &mut out);
        undecided.push((r.t, d.undecided(), !out.is_empty()));
    }
    // Quiet before the move; undecided from when e4 leads until it goes out; quiet after.
    assert!(!undecided[0].1);
    let first = undecided.iter().position(|u| u.1).expect("the move leads a while before it goes out");
    let sent = undecided.iter().position(|u| u.2).expect("the move went out");
    assert!(first < sent && undecided[first..sent].iter().all(|u| u.1), "{undecided:?}");
    assert!(undecided[sent..].iter().all(|u| !u.1), "{undecided:?}");
}

#[test]
fn stills_one_a_move_and_a_whole_move_missed_between_two() {
    let start = Chess::default();
    let moves = line(&start, "e4 e5 Nf3 Nc6 Bb5 a6 Ba4 Nf6 O-O Be7");
    // Photos 4 and 7 were never taken.
    let film = photographed(&start, &moves, 2.0, |photo| photo == 4 || photo == 7);
    let (read, _) = film.decode(start, Options::default());
    assert_eq!(read.iter().map(|m| m.mv).collect::<Vec<_>>(), moves);
}

#[test]
fn missed_frames_and_a_square_hidden_for_seconds_hold_the_move_back_without_losing_it() {
    let start = Chess::default();
    let moves = line(&start, "d4 d5");
    let mut film = Film::new();
    let mut p = start.clone();
    film.show(p.board(), 10, 0.05, &[], None);
    let before = p.board().clone();
    p.play_unchecked(moves[0]);
    // Frames dropped: the hand at d2, then nothing for 0.3 s, then the pawn on d4 under the hand.
    film.show(&before, 3, 0.05, &[Square::D2], Some(Color::White));
    film.show(p.board(), 3, 0.3, &[Square::D4], Some(Color::White));
    // d4 hidden for three seconds by a sleeve resting there.
    film.show(p.board(), 60, 0.05, &[Square::D4], Some(Color::White));
    film.show(p.board(), 10, 0.05, &[], None);
    film.play(&mut p, moves[1]);
    let (read, corrections) = film.decode(start, Options::default());
    assert_eq!(ucis(&read), ["d2d4", "d7d5"]);
    assert!(corrections.is_empty());
}

/// 1.e4 Nf6 2.d4 filmed with ...Nf6 first read as ...Nh6 for `frames` clear frames (f6 empty
/// and h6 Black's, each read at `p`), then as it is for two seconds; and when the misread ends.
fn misread_nf6(frames: usize, p: f32) -> (Film, f64) {
    let start = Chess::default();
    let moves = line(&start, "e4 Nf6 d4");
    let mut film = Film::new();
    let mut pos = start.clone();
    film.show(pos.board(), 10, 0.05, &[], None);
    film.play(&mut pos, moves[0]);
    let before = pos.board().clone();
    pos.play_unchecked(moves[1]);
    let mut wrong = before.clone();
    wrong.discard_piece_at(Square::G8);
    wrong.set_piece_at(Square::H6, Color::Black.knight());
    film.show(&before, 4, 0.05, &[Square::G8], Some(Color::Black));
    film.p = p;
    film.show(&wrong, frames, 0.05, &[], None);
    film.p = 0.9;
    let misread_ends = film.t;
    film.show(pos.board(), 40, 0.05, &[], None);
    film.play(&mut pos, moves[2]);
    (film, misread_ends)
}

#[test]
fn a_misread_is_outvoted_and_a_later_reading_switches_the_history() {
    let start = Chess::default();
    // Black plays ...Nf6, but the first clear readings show f6 as empty and h6 as Black's: ...Nh6.
    let (film, _) = misread_nf6(6, 0.9);
    let (read, corrections) = film.decode(start.clone(), Options::default());
    assert_eq!(ucis(&read), ["e2e4", "g8f6", "d2d4"]);
    // Offline the misread never went out. Live, with a lag shorter than the misread, it does;
    // once the readings show f6, it is taken back, ...Nf6 put out in its place, and the game
    // read on.
    assert!(corrections.is_empty(), "{corrections:?}");
    let (sent_live, said) = sent(&film, start.clone(), Options::with_lag(0.1));
    assert_eq!(sent_live.iter().map(|m| m.0.as_str()).collect::<Vec<_>>(), ["e2e4", "g8h6", "d2d4"], "{sent_live:?}");
    let taken_back: Vec<_> = said.iter().filter_map(|d| match d { Decoded::Replaced { from, replaced, by, .. } => Some((*from, ucis(replaced), ucis(by))), _ => None }).collect();
    assert_eq!(taken_back, [(1, vec!["g8h6".to_string()], vec!["g8f6".to_string()])], "{said:?}");
    let (read, corrections) = film.decode(start.clone(), Options::with_lag(0.1));
    assert_eq!(ucis(&read), ["e2e4", "g8f6", "d2d4"]);
    assert_eq!(corrections.len(), 1, "{corrections:?}");
    // While the reading that takes ...Nh6 back waits to replace it, the decoder is undecided
    // (live, every frame is read then).
    let mut d = Decoder::new(start, Options::with_lag(0.1));
    let mut out = Vec::new();
    let mut before = false;
    for r in &film.readings {
        d.push(r, &mut out);
        if out.iter().any(|o| matches!(o, Decoded::Replaced { .. })) {
            assert!(before, "undecided before the replacement went out");
            break;
        }
        before = d.undecided();
        out.clear();
    }
}

#[test]
fn a_persistent_misread_in_place_never_becomes_a_move() {
    let start = Chess::default();
    let moves = line(&start, "e4 e5 Nf3");
    let mut film = Film::new();
    // f2's pawn reads empty throughout (a shadow), and the king and queen swapped.
    let mut p = start.clone();
    let mut frames = Vec::new();
    let shown = |b: &Board| {
        let mut b = b.clone();
        b.discard_piece_at(Square::F2);
        b.set_piece_at(Square::D1, Color::White.king());
        b.set_piece_at(Square::E1, Color::White.queen());
        b
    };
    film.show(&shown(p.board()), 20, 0.05, &[], None);
    for &m in &moves {
        let before = shown(p.board());
        p.play_unchecked(m);
        frames.push(m);
        film.show(&before, 4, 0.05, &[m.from().unwrap()], Some(p.turn().other()));
        film.show(&shown(p.board()), 4, 0.05, &[m.to()], Some(p.turn().other()));
        film.show(&shown(p.board()), 30, 0.05, &[], None);
    }
    let (read, _) = film.decode(start, Options::default());
    assert_eq!(ucis(&read), ["e2e4", "e7e5", "g1f3"]);
}

#[test]
fn a_square_misread_at_the_start_does_not_pay_for_a_capture_onto_it() {
    // As on the real clip turned a quarter: a8's rook reads White from the first frame, and the
    // bishop set on c4 reads as likely empty as there. Counted in full, a8's misread would
    // soon pay for Bxa8, a bishop's move no bishop makes (20 nats); distrusted, it never does.
    let start = pos("r1bqkbnr/pppp1ppp/2n5/4p2Q/4P3/8/PPPP1PPP/RNB1KBNR w KQkq - 2 3");
    let bc4 = line(&start, "Bc4")[0];
    let mut after = start.clone();
    after.play_unchecked(bc4);
    let misread = |b: &Board| {
        let mut b = b.clone();
        b.set_piece_at(Square::A8, Color::White.rook());
        b
    };
    let mut film = Film::new();
    film.show(&misread(start.board()), 10, 0.05, &[], None);
    // Black's arm withdraws over a8 (it has just played ...Nc6).
    film.show(&misread(start.board()), 4, 0.05, &[Square::A8], Some(Color::Black));
    film.show(&misread(start.board()), 10, 0.05, &[], None);
    film.show(&misread(start.board()), 4, 0.05, &[Square::F1], Some(Color::White));
    film.show(&misread(after.board()), 4, 0.05, &[Square::C4], Some(Color::White));
    for _ in 0..80 {
        film.show(&misread(after.board()), 1, 0.05, &[], None);
        let c4 = &mut film.readings.last_mut().expect("a reading").squares[Square::C4 as usize].classes;
        let bishop = piece_class(Some(Color::White.bishop()));
        *c4 = std::array::from_fn(|c| if c == bishop || c == 0 { 0.45 } else { 0.1 / (CLASSES - 2) as f32 });
    }
    let read = |distrusted: Bitboard| {
        let mut d = Decoder::new(start.clone(), Options::default());
        d.distrust(distrusted);
        let mut out = Vec::new();
        for r in &film.readings {
            d.push(r, &mut out);
        }
        d.finish(&mut out);
        out.into_iter().filter_map(|o| if let Decoded::Move(m) = o { Some(m) } else { None }).collect::<Vec<_>>()
    };
    assert_ne!(ucis(&read(Bitboard::EMPTY)), ["f1c4"], "the hazard this guards against");
    assert_eq!(ucis(&read(Bitboard::from(Square::A8))), ["f1c4"]);
}

#[test]
fn an_illegal_move_is_read_and_the_game_goes_on() {
    let start = Chess::default();
    let mut film = Film::new();
    film.show(start.board(), 10, 0.05, &[], None);
    // White's knight jumps from g1 to g3.
    let mut after = start.board().clone();
    after.discard_piece_at(Square::G1);
    after.set_piece_at(Square::G3, Color::White.knight());
    film.show(start.board(), 4, 0.05, &[Square::G1], Some(Color::White));
    film.show(&after, 4, 0.05, &[Square::G3], Some(Color::White));
    film.show(&after, 30, 0.05, &[], None);
    // Black answers ...e5.
    let mut reply = after.clone();
    reply.discard_piece_at(Square::E7);
    reply.set_piece_at(Square::E5, Color::Black.pawn());
    film.show(&after, 4, 0.05, &[Square::E7], Some(Color::Black));
    film.show(&reply, 30, 0.05, &[], None);
    let (read, _) = film.decode(start, Options::default());
    assert_eq!(ucis(&read), ["g1g3", "e7e5"]);
    assert!(read[0].illegal && !read[1].illegal);
}

#[test]
fn a_faint_blip_of_the_hand_map_on_photos_held_as_video_is_no_hand() {
    // Photos held as video: no hand in view, but one frame's hand map reads 0.6 somewhere and
    // covers no square. The camera has not seen the hand that moved the knight, so the board's
    // illegal jump g1-g3 is read as it is where no hand is seen.
    let start = Chess::default();
    let mut film = Film::new();
    film.show(start.board(), 40, 0.05, &[], None);
    film.show(start.board(), 1, 0.05, &[], None);
    film.readings.last_mut().expect("a reading").hands.white[0] = 0.6;
    let mut after = start.board().clone();
    after.discard_piece_at(Square::G1);
    after.set_piece_at(Square::G3, Color::White.knight());
    film.show(&after, 40, 0.05, &[], None);
    let mut reply = after.clone();
    reply.discard_piece_at(Square::E7);
    reply.set_piece_at(Square::E5, Color::Black.pawn());
    film.show(&reply, 40, 0.05, &[], None);
    let (read, _) = film.decode(start, Options::default());
    assert_eq!(ucis(&read), ["g1g3", "e7e5"]);
    assert!(read[0].illegal);
}

#[test]
fn a_knocked_piece_is_no_move() {
    let start = Chess::default();
    let moves = line(&start, "e4");
    let mut film = filmed(&start, &moves);
    let mut p = start.clone();
    p.play_unchecked(moves[0]);
    // Black's hand knocks the d7 pawn over: the square reads occupied, its piece unknown.
    let mut r = reading(p.board(), 0.9, 0.0);
    let knocked = SquareReading { classes: std::array::from_fn(|c| if c == 0 { 0.05 } else { 0.95 / 12.0 }), cover: 0.0, contact: 0.0 };
    r.squares[Square::D7 as usize] = knocked;
    for _ in 0..40 {
        film.t += 0.05;
        film.readings.push(Reading { t: film.t, ..r.clone() });
    }
    let (read, _) = film.decode(start, Options::default());
    assert_eq!(ucis(&read), ["e2e4"]);
}

/// A 100-ply game with castling both ways, en passant, captures and an underpromotion.
fn long_game() -> (Chess, Vec<Move>) {
    let start = Chess::default();
    let mut moves = line(&start, "e4 d5 exd5 Nf6 Nf3 Qxd5 Be2 Bg4 O-O Nc6 d4 O-O-O c4 Qd7 d5 e5 dxe6 Kb8 exf7 Bd6 f8=N Rhxf8");
    let mut p = start.clone();
    for &m in &moves {
        p.play_unchecked(m);
    }
    // Then moves picked by a fixed pseudo-random sequence, none ending the game.
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    while moves.len() < 100 {
        let legal = p.legal_moves();
        let ok: Vec<Move> = legal
            .iter()
            .copied()
            .filter(|&m| {
                let mut q = p.clone();
                q.play_unchecked(m);
                !q.is_game_over()
            })
            .collect();
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let m = ok[(seed >> 33) as usize % ok.len()];
        p.play_unchecked(m);
        moves.push(m);
    }
    (start, moves)
}

/// `n` pseudo-random numbers in 0..1 from `seed`.
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[test]
fn a_hundred_ply_game_decodes_exactly_from_clean_readings_and_with_five_percent_flipped() {
    let (start, moves) = long_game();
    assert!(moves.iter().any(|m| matches!(m, Move::EnPassant { .. })));
    assert!(moves.iter().any(|m| m.promotion() == Some(shakmaty::Role::Knight)));
    assert_eq!(moves.iter().filter(|m| m.is_castle()).count(), 2);
    for seed in [1u64, 2, 3] {
        for flip in [0.0, 0.05] {
            // One still a position, as a camera taking a photo a move would give.
            let mut film = Film::new();
            let mut noise = Noise(seed);
            let mut p = start.clone();
            let mut boards = vec![p.board().clone()];
            for &m in &moves {
                p.play_unchecked(m);
                boards.push(p.board().clone());
            }
            for b in &boards {
                film.t += 2.0;
                let mut r = reading(b, 0.9, film.t);
                for sq in Square::ALL {
                    if noise.next() < flip {
                        let class = (noise.next() * CLASSES as f64) as usize % CLASSES;
                        let rest = 0.1 / (CLASSES - 1) as f32;
                        r.squares[sq as usize].classes = std::array::from_fn(|c| if c == class { 0.9 } else { rest });
                    }
                }
                film.readings.push(r);
            }
            let (read, _) = film.decode(start.clone(), Options::default());
            let read: Vec<Move> = read.iter().map(|m| m.mv).collect();
            let first_wrong = read.iter().zip(&moves).position(|(a, b)| a != b);
            assert_eq!((read.len(), first_wrong), (moves.len(), None), "seed {seed}, {flip} flipped");
        }
    }
}

#[test]
fn stills_with_several_moves_missed_between_two() {
    // Kasparov-Topalov, Wijk aan Zee 1999, with six plies and then four between two photos: the
    // game ends where it did, with no illegal move (the order of moves no photo shows apart may
    // differ).
    let start = Chess::default();
    let game = "e4 d6 d4 Nf6 Nc3 g6 Be3 Bg7 Qd2 c6 f3 b5 Nge2 Nbd7 Bh6 Bxh6 Qxh6 Bb7 a3 e5 O-O-O Qe7 Kb1 a6 Nc1 O-O-O \
                Nb3 exd4 Rxd4 c5 Rd1 Nb6 g3 Kb8 Na5 Ba8 Bh3 d5 Qf4+ Ka7 Rhe1 d4 Nd5 Nbxd5 exd5 Qd6 Rxd4 cxd4 Re7+ Kb6 \
                Qxd4+ Kxa5 b4+ Ka4 Qc3 Qxd5 Ra7 Bb7 Rxb7 Qc4";
    let moves = line(&start, game);
    // Photos 30 to 34 and 50 to 52 were never taken.
    let film = photographed(&start, &moves, 2.0, |photo| (30..35).contains(&photo) || (50..53).contains(&photo));
    let (read, _) = film.decode(start.clone(), Options::default());
    let (mut played, mut q) = (start.clone(), start);
    for &m in &moves {
        played.play_unchecked(m);
    }
    for m in &read {
        q.play_unchecked(m.mv);
    }
    assert_eq!(q.board(), played.board(), "{:?}", sans(&read));
    assert!(read.iter().all(|m| !m.illegal), "{:?}", sans(&read));
}

#[test]
fn stills_with_a_gambit_hidden_between_two() {
    // 4.b4 Bxb4 5.c3 Ba5 between two photos: the pawn given up on b4 is seen only as gone from
    // b2, and shorter stories (...Bb4, c3, ...Ba5) explain all but that square.
    let start = Chess::default();
    let moves = line(&start, "e4 e5 Nf3 Nc6 Bc4 Bc5 b4 Bxb4 c3 Ba5 d4 exd4 O-O d3 Qb3 Qf6 e5 Qg6");
    let film = photographed(&start, &moves, 1.0, |photo| (7..10).contains(&photo));
    let (read, _) = film.decode(start, Options::default());
    assert_eq!(read.iter().map(|m| m.mv).collect::<Vec<_>>(), moves, "{:?}", sans(&read));
}

#[test]
fn moves_made_while_someone_hides_the_board_are_read_when_it_shows_again() {
    let start = Chess::default();
    let moves = line(&start, "e4 e5 Nf3 Nc6 Bc4 Bc5 b4 Bxb4 c3 Ba5 d4 exd4 O-O d3");
    let mut film = Film::new();
    let mut p = start.clone();
    film.show(p.board(), 10, 0.05, &[], None);
    for (i, &m) in moves.iter().enumerate() {
        if (6..10).contains(&i) {
            // Someone leans over the board: all of it hidden while four moves are made, a
            // gambit among them.
            p.play_unchecked(m);
            film.show(p.board(), 20, 0.05, &Square::ALL, Some(Color::White));
        } else {
            film.play(&mut p, m);
        }
    }
    let (read, _) = film.decode(start, Options::default());
    assert_eq!(read.iter().map(|m| m.mv).collect::<Vec<_>>(), moves, "{:?}", sans(&read));
}

/// The moves `d` put out for `film`'s readings, each with the time of the reading at which it
/// went out (the end for those `finish` gave).
fn sent(film: &Film, start: Chess, opts: Options) -> (Vec<(String, f64)>, Vec<Decoded>) {
    let (mut sent, mut other) = (Vec::new(), Vec::new());
    for (o, t) in film.said(start, opts) {
        match o {
            Decoded::Move(m) => sent.push((crate::rules::record::uci(m.mv), t)),
            o => other.push(o),
        }
    }
    (sent, other)
}

#[test]
fn offline_a_move_goes_out_once_the_beam_has_coalesced_on_it_however_late() {
    let start = Chess::default();
    // Black plays ...Nf6, but for a second the readings show f6 empty and h6 Black's (a shadow,
    // read less surely), then f6 as it is.
    let (film, misread_ends) = misread_nf6(20, 0.6);
    // A lag of half a second puts the misread out; waiting for the beam does not, and puts
    // ...Nf6 out only once the readings have settled it, before the game's end.
    let (lagged, _) = sent(&film, start.clone(), Options::with_lag(0.5));
    assert_eq!(lagged[1].0, "g8h6", "{lagged:?}");
    let (offline, other) = sent(&film, start, Options::default());
    assert_eq!(offline.iter().map(|m| m.0.as_str()).collect::<Vec<_>>(), ["e2e4", "g8f6", "d2d4"], "{offline:?}");
    assert!(offline[1].1 > misread_ends && offline[1].1.is_finite(), "{offline:?}");
    assert!(other.is_empty(), "nothing was said to correct: {other:?}");
}

#[test]
fn the_last_ply_goes_out_at_the_end_of_the_footage_with_the_hand_still_over_it() {
    let start = Chess::default();
    let moves = line(&start, "e4 e5");
    let mut film = filmed(&start, &moves[..1]);
    // Black sets the pawn on e5 and the footage ends, the hand still beside it.
    let mut p = start.clone();
    p.play_unchecked(moves[0]);
    let before = p.board().clone();
    p.play_unchecked(moves[1]);
    film.show(&before, 4, 0.05, &[Square::E7], Some(Color::Black));
    film.show(p.board(), 3, 0.05, &[Square::E6], Some(Color::Black));
    let (offline, other) = sent(&film, start, Options::default());
    assert_eq!(offline.iter().map(|m| m.0.as_str()).collect::<Vec<_>>(), ["e2e4", "e7e5"], "{offline:?}");
    assert_eq!(offline[1].1, f64::INFINITY, "put out by the end of the input");
    assert!(other.is_empty(), "{other:?}");
}

#[test]
fn footage_ending_mid_move_puts_the_move_out_unfinished_where_the_board_shows_which() {
    // White's king is on g1 and the rook still on h1 when the footage ends.
    let start = pos("r3k2r/pppq1ppp/8/8/8/8/PPPQ1PPP/R3K2R w KQkq - 0 1");
    let mut film = Film::new();
    film.show(start.board(), 20, 0.05, &[], None);
    let mut half = start.board().clone();
    half.discard_piece_at(Square::E1);
    half.set_piece_at(Square::G1, Color::White.king());
    film.show(&half, 30, 0.05, &[Square::H1], Some(Color::White));
    let (sent_moves, other) = sent(&film, start.clone(), Options::default());
    assert!(sent_moves.is_empty(), "{sent_moves:?}");
    match &other[..] {
        [Decoded::Unfinished { mv: Some(m), text, .. }] => {
            assert_eq!(crate::rules::record::uci(m.mv), "e1g1");
            assert!(text.contains("O-O") && text.contains("unfinished"), "{text}");
        }
        _ => panic!("{other:?}"),
    }
    // The pawn lifted from a2 and not set down: which move is not shown.
    let mut film = Film::new();
    film.show(start.board(), 20, 0.05, &[], None);
    let mut lifted = start.board().clone();
    lifted.discard_piece_at(Square::A2);
    film.show(&lifted, 10, 0.05, &[Square::A4], Some(Color::White));
    let (sent_moves, other) = sent(&film, start, Options::default());
    assert!(sent_moves.is_empty(), "{sent_moves:?}");
    assert!(matches!(&other[..], [Decoded::Unfinished { mv: None, text, .. }] if text.contains("a2")), "{other:?}");
}

#[test]
fn an_ambiguity_that_lasts_is_capped_in_moves_waiting() {
    // A 100-ply game, read offline: however the beam stands, no more than MOST_PENDING moves
    // wait to become final.
    let (start, moves) = long_game();
    let film = filmed(&start, &moves);
    let mut d = Decoder::new(start, Options::default());
    let mut out = Vec::new();
    let mut most = 0;
    for r in &film.readings {
        d.push(r, &mut out);
        most = most.max(d.leading.len());
    }
    d.finish(&mut out);
    assert!(most <= MOST_PENDING + 1, "{most}");
    assert_eq!(out.iter().filter(|o| matches!(o, Decoded::Move(_))).count(), moves.len());
}

#[test]
fn stills_read_moves_made_in_check_that_leave_the_king_in_check_and_the_game_read_on() {
    // 1.e4 e5 2.d4 Bb4+: White, in check, plays 3.a3 and Black, unaware, 3...Nc6; White plays
    // on with 4.Nf3, still in check, and Black takes the king's side pawn 4...Bxd2+ ... a game in
    // which nobody noticed, as club players sometimes do. One photo a move, no hand in any.
    let start = Chess::default();
    let mut p = start.clone();
    let mut played = Vec::new();
    for san in ["e4", "e5", "d4", "Bb4+"] {
        let m = san.parse::<San>().unwrap().to_move(&p).unwrap();
        p.play_unchecked(m);
        played.push((m, false));
    }
    let mut boards = vec![start.board().clone()];
    let mut q = start.clone();
    for (m, _) in &played {
        q.play_unchecked(*m);
        boards.push(q.board().clone());
    }
    // a2-a3 in check: illegal, the board shows it.
    let a3 = hypothesis::Transition::illegal(&q, Square::A2, Square::A3).unwrap();
    q = a3.after.clone();
    boards.push(q.board().clone());
    played.push((a3.mv, true));
    for san in ["Nc6", "Nf3"] {
        // Legal for Black; for White, Nf3 leaves the king in check again.
        let m = match san.parse::<San>().unwrap().to_move(&q) {
            Ok(m) => (m, false),
            Err(_) => {
                let from = if san == "Nf3" { Square::G1 } else { Square::B8 };
                let tr = hypothesis::Transition::illegal(&q, from, if san == "Nf3" { Square::F3 } else { Square::C6 }).unwrap();
                (tr.mv, true)
            }
        };
        q = hypothesis::after(&q, m.0, m.1);
        boards.push(q.board().clone());
        played.push(m);
    }
    let mut film = Film::new();
    for b in &boards {
        film.show(b, 1, 2.0, &[], None);
    }
    // The position after the last move, photographed twice more.
    film.show(boards.last().unwrap(), 2, 2.0, &[], None);
    let (read, _) = film.decode(start, Options::default());
    let got: Vec<(String, bool)> = read.iter().map(|m| (crate::rules::record::uci(m.mv), m.illegal)).collect();
    let want: Vec<(String, bool)> = played.iter().map(|(m, i)| (crate::rules::record::uci(*m), *i)).collect();
    assert_eq!(got, want);
}

#[test]
fn stills_read_a_piece_moved_as_another_moves_where_it_reads_in_its_colour_only_just() {
    // 1.e4, then Black's knight from b8 to b6, a knight's move no knight makes, and 2.d4, seen on
    // eight photos more. The knight on b6 reads Black at 0.62 (the rest empty) on every photo
    // after it, as a dark knight on a dark square can: likelier than not, never sure.
    let start = Chess::default();
    let e4 = line(&start, "e4")[0];
    let mut p = start.clone();
    p.play_unchecked(e4);
    let nb6 = hypothesis::Transition::illegal(&p, Square::B8, Square::B6).unwrap();
    let d4 = line(&nb6.after, "d4")[0];
    let mut after = nb6.after.clone();
    after.play_unchecked(d4);
    let mut film = Film::new();
    for (b, n) in [(start.board(), 1), (p.board(), 1), (nb6.after.board(), 1), (after.board(), 8)] {
        film.show(b, n, 1.0, &[], None);
    }
    let knight = piece_class(Some(Color::Black.knight()));
    for r in &mut film.readings[2..] {
        r.squares[Square::B6 as usize].classes = std::array::from_fn(|c| if c == knight { 0.62 } else if c == 0 { 0.38 } else { 0.0 });
    }
    let (read, _) = film.decode(start, Options::default());
    let got: Vec<(String, bool)> = read.iter().map(|m| (crate::rules::record::uci(m.mv), m.illegal)).collect();
    assert_eq!(got, [("e2e4".to_string(), false), ("b8b6".to_string(), true), ("d2d4".to_string(), false)]);
}
