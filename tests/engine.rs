//! Engine behaviour beyond the worked scenarios: how it copes with the ways real hands and a
//! real tracker report a game.

use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess};
use touchmove::events::Event;
use touchmove::rules::{Engine, Options, Record};

/// Runs events written one a line as `t hand ev [sq] [piece] [conf=C] [hand_conf=C]`, e.g.
/// `3 w1 place e8 Q` or `1 w1 touch g2 conf=0.5`.
fn run(fen: &str, opts: Options, script: &str) -> Vec<Record> {
    let pos: Chess = fen.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap();
    let mut engine = Engine::new(pos, opts);
    let mut out = Vec::new();
    for (i, line) in script.lines().map(str::trim).filter(|l| !l.is_empty()).enumerate() {
        let w: Vec<&str> = line.split_whitespace().collect();
        let mut json = format!(r#"{{"t":{},"hand":"{}","ev":"{}""#, w[0], w[1], w[2]);
        let (confs, args): (Vec<&str>, Vec<&str>) = w[3..].iter().partition(|a| a.contains("conf="));
        if let Some(sq) = args.first() {
            json.push_str(&format!(r#","sq":"{sq}""#));
        }
        if let Some(piece) = args.get(1) {
            json.push_str(&format!(r#","piece":"{piece}""#));
        }
        for c in confs {
            let (field, value) = c.split_once('=').unwrap();
            json.push_str(&format!(r#","{field}":{value}"#));
        }
        json.push('}');
        engine.apply(&Event::parse(&json, i + 1).unwrap(), &mut out);
    }
    engine.finish(&mut out);
    out
}

fn summary(out: &[Record]) -> Vec<String> {
    out.iter()
        .map(|r| match r {
            Record::Move(m) => format!("move {}", m.san),
            Record::Ruling(r) => format!("{} {}", r.verdict.as_str(), r.article),
            Record::Warning(w) => format!("warning: {}", w.text),
            Record::ClaimClosed(c) => format!("claim closed {}", c.breach_article),
            Record::Correction(c) => format!("correction from ply {}", c.ply),
        })
        .collect()
}

const CLOCK: Options = Options { clock: true, declarations: true, time_control: touchmove::rules::TimeControl::Standard, min_conf: 0.7 };
const ITALIAN: &str = "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4";

#[test]
fn a_captured_piece_kept_in_the_hand_is_off_the_board() {
    let out = run(ITALIAN, CLOCK, "1 w1 lift c4\n2 w1 lift f7\n3 w1 release f7\n4 w1 press");
    assert_eq!(summary(&out), ["move Bxf7+"]);
}

#[test]
fn a_piece_set_down_on_one_of_its_own_colour_is_still_in_the_hand() {
    // The readings lost the rook on a1 under the arm and saw it back as the bishop set down.
    let out = run(ITALIAN, CLOCK, "1 w1 lift c4\n2 w1 release a1\n3 w1 release d3\n4 w1 press");
    assert_eq!(
        summary(&out),
        ["warning: bishop released on a1 by w1, where the rook stands: no piece takes one of its own colour, so the bishop is taken to be still in the hand.", "move Bd3"]
    );
}

#[test]
fn a_promotion_exchanged_by_an_arm_taken_for_the_opponents_is_the_movers() {
    // White's arm reaches across the board to exchange the pawn on e8: the tracker gives the
    // hand Black's side, as it does an arm crossing Black's edge.
    let fen = "8/4P1k1/8/8/8/8/6K1/8 w - - 0 1";
    let script = "1 w1 lift e7\n2 w1 release e8\n3 b2 lift e8\n4 b2 remove\n5 b2 place e8 Q\n6 b1 lift g7\n7 b1 release h6";
    let out = run(fen, Options::default(), script);
    let decided: Vec<String> = summary(&out).into_iter().filter(|s| !s.starts_with("warning")).collect();
    assert_eq!(decided, ["move e8=Q", "move Kh6"]);
    let warnings: Vec<String> = summary(&out).into_iter().filter(|s| s.starts_with("warning")).collect();
    assert!(warnings.iter().any(|w| w.contains("b2 lifted White's pawn on e8 while White has the move: taken as White's hand")), "{warnings:?}");
    assert!(warnings.iter().any(|w| w.contains("b2 set White's queen on e8 while White has the move: taken as White's hand")), "{warnings:?}");
}

#[test]
fn illegal_castling_completed_with_the_rook_is_an_illegal_move() {
    // The bishop on c4 covers f1: kingside castling is illegal.
    let fen = "r3k2r/ppp2ppp/8/8/2b5/8/PPP2PPP/R3K2R w KQkq - 0 1";
    let out = run(fen, CLOCK, "1 w1 lift e1\n2 w1 release g1\n3 w1 lift h1\n4 w1 release f1\n5 w1 press");
    assert_eq!(summary(&out), ["illegal 7.5.1"]);
    let Record::Ruling(r) = &out[0] else { unreachable!() };
    let required: Vec<String> = r.required.iter().map(|&m| touchmove::rules::record::uci(m)).collect();
    assert_eq!(required, ["e1c1", "e1d1", "e1d2"]);
}

#[test]
fn an_illegal_move_the_tracker_is_unsure_of_is_left_to_the_arbiter_and_not_counted() {
    // The queen "released" on a7 (a7 pawn misread as a white queen), twice: with the release
    // at conf 0.5, each is a judgement, and the second is not a second illegal move (7.5.5).
    let fen = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2";
    let unsure = "1 w1 lift d1\n2 w1 release a7 conf=0.5\n3 w1 press\n4 w1 lift a7\n5 w1 release a7 conf=0.5\n6 w1 press";
    let out = run(fen, CLOCK, unsure);
    let rulings: Vec<&touchmove::rules::Ruling> = out.iter().filter_map(|r| if let Record::Ruling(r) = r { Some(r) } else { None }).collect();
    assert!(!rulings.is_empty() && rulings.iter().all(|r| r.verdict.as_str() == "judgement" && r.article.to_string() == "7.5.1"), "{:?}", summary(&out));
    assert!(rulings.iter().all(|r| r.text.contains("confidence 0.50") && !r.text.contains("loses")), "{rulings:?}");
    // Sure of it: an illegal move.
    let out = run(fen, CLOCK, "1 w1 lift d1\n2 w1 release a7\n3 w1 press");
    assert_eq!(summary(&out)[..2], ["warning: queen released on a7, where Black's pawn stood; that piece is taken as captured.", "illegal 7.5.1"]);
}

#[test]
fn a_hand_taken_for_the_other_players_that_moves_the_movers_piece_is_the_movers() {
    // One person playing both sides: the hand that played e5 goes on to play Qh5 for White.
    let fen = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2";
    let opts = Options { clock: false, ..CLOCK };
    let out = run(fen, opts, "1 b1 lift d1\n2 b1 release h5\n3 b1 lift b8\n4 b1 release c6");
    assert_eq!(summary(&out), ["warning: b1 lifted White's queen on d1 while White has the move: taken as White's hand.", "move Qh5", "move Nc6"]);
    // The events come back as the engine took them: the hand is White's for this move.
    let pos: Chess = fen.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap();
    let mut engine = Engine::new(pos, opts);
    let lift = Event::parse(r#"{"t":1,"hand":"b1","ev":"lift","sq":"d1"}"#, 1).unwrap();
    assert_eq!(engine.apply(&lift, &mut Vec::new()).hand.to_string(), "w1");
    // A piece Black could take (the e4 pawn, by ...d5xe4): Black's move, the turn missed.
    let fen = "rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2";
    let out = run(fen, opts, "1 b1 lift e4\n2 b1 lift d5\n3 b1 release e4");
    assert!(summary(&out)[0].starts_with("warning: Black moved a piece while White had the move"), "{:?}", summary(&out));
}

#[test]
fn a_hand_holding_two_pieces_puts_back_the_one_that_stood_where_it_lets_go() {
    // The readings lose a7's pawn and b8's knight under Black's arm, in that order, and give
    // them back the other way round; then Black plays e5. The pawn is back on a7, not the knight.
    let fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
    let opts = Options { clock: false, ..CLOCK };
    let script = "1 b1 lift a7\n1.1 b1 lift b8\n1.3 b1 release a7 conf=0.5\n1.4 b1 release b8 conf=0.5\n2 b1 lift e7\n2.5 b1 release e5\n4 w1 lift g1\n4.5 w1 release f3";
    let out = run(fen, opts, script);
    let moves: Vec<String> = summary(&out).into_iter().filter(|s| s.starts_with("move")).collect();
    assert_eq!(moves, ["move e5", "move Nf3"], "{:?}", summary(&out));
}

#[test]
fn a_hand_holding_pieces_of_both_colours_sets_down_the_one_that_can_go_there() {
    // The readings took b8's knight for lifted under the arm that then played e5 and goes on to
    // move White's queen (one person playing both sides): the piece set down on h5 is the
    // queen, the one of the two that can go there, though the hand is Black's to the tracker.
    let fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";
    let opts = Options { clock: false, ..CLOCK };
    let out = run(fen, opts, "1 b1 lift b8\n2 b1 lift e7\n2.5 b1 release e5\n4 b1 lift d1\n5 b1 release h5\n6 b1 release c6\n7 w1 lift f1");
    assert!(!summary(&out).iter().any(|s| s.contains("knight released on h5")), "{:?}", summary(&out));
    let Some(Record::Warning(w)) = out.iter().rev().find(|r| matches!(r, Record::Warning(w) if w.text.contains("following the board"))) else {
        panic!("{:?}", summary(&out));
    };
    assert!(w.text.contains("2n5/4p2Q"), "{}", w.text);
}

#[test]
fn without_a_clock_the_opponents_first_touch_completes_the_move() {
    let opts = Options { clock: false, ..CLOCK };
    let out = run(ITALIAN, opts, "1 w1 lift f3\n2 w1 release g5\n5 b1 touch d7\n6 b1 lift d7\n7 b1 release d5");
    assert_eq!(summary(&out), ["move Ng5", "move d5"]);
    let Record::Move(m) = &out[0] else { unreachable!() };
    assert_eq!((m.made_t, m.t), (2.0, 5.0));
}

#[test]
fn without_a_clock_an_illegal_move_is_ruled_at_the_moment_it_was_made() {
    // White in check from the bishop on b4 plays Nf3, which leaves the king in check; Black
    // plays on two seconds later.
    let fen = "rnbqk1nr/pppp1ppp/8/4p3/1b4P1/3P4/PPP1PP1P/RNBQKBNR w KQkq - 1 3";
    let opts = Options { clock: false, ..CLOCK };
    let out = run(fen, opts, "1 w1 lift g1\n2 w1 release f3\n3 w1 touch f3\n4 b1 lift b4\n5 b1 release d2");
    let Some(Record::Ruling(r)) = out.iter().find(|r| matches!(r, Record::Ruling(_))) else { panic!("no ruling: {:?}", summary(&out)) };
    assert_eq!((r.verdict.as_str(), r.article.to_string(), r.t), ("illegal", "7.5.1".to_string(), 2.0));
    assert!(r.text.contains("Black played on at 4.0 s, completing it"), "{}", r.text);
}

#[test]
fn a_late_clock_press_after_the_opponent_started_is_accepted() {
    let out = run(ITALIAN, CLOCK, "1 w1 lift f3\n2 w1 release g5\n3 b1 lift d7\n4 w1 press\n5 b1 release d5\n6 b1 press");
    assert_eq!(summary(&out), ["move Ng5", "move d5"]);
}

#[test]
fn the_opponent_moving_out_of_turn_is_followed_with_a_warning() {
    let out = run(ITALIAN, CLOCK, "1 b1 lift d7\n2 b1 release d5\n3 b1 press");
    let s = summary(&out);
    assert!(s[0].starts_with("warning: Black moved a piece while White had the move"), "{s:?}");
    assert_eq!(s[1], "move d5");
}

#[test]
fn a_second_illegal_move_loses() {
    let fen = "8/4qpkp/6p1/8/8/2Q5/5PPP/6K1 b - - 0 1";
    let out = run(fen, CLOCK, "1 b1 lift e7\n2 b1 release e6\n3 b1 press\n4 b1 lift e6\n5 b1 release d6\n6 b1 press");
    let texts: Vec<String> = out.iter().filter_map(|r| if let Record::Ruling(r) = r { Some(r.text.clone()) } else { None }).collect();
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert!(texts[0].contains("White gets two extra minutes"), "{}", texts[0]);
    assert!(texts[1].contains("second completed illegal move: Black loses the game"), "{}", texts[1]);
}

#[test]
fn a_doubtful_touch_gives_a_judgement_naming_the_doubt() {
    let script = r#"{"t":1,"ev":"touch","sq":"d2","hand":"w1","conf":0.3}"#;
    let pos: Chess = ITALIAN.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap();
    let mut engine = Engine::new(pos, CLOCK);
    let mut out = Vec::new();
    engine.apply(&Event::parse(script, 1).unwrap(), &mut out);
    for (t, line) in [(2, r#""ev":"lift","sq":"f3""#), (3, r#""ev":"release","sq":"g5""#)] {
        engine.apply(&Event::parse(&format!(r#"{{"t":{t},{line},"hand":"w1"}}"#), t).unwrap(), &mut out);
    }
    let Record::Ruling(r) = &out[0] else { panic!("{out:?}") };
    assert_eq!((r.verdict.as_str(), r.article.as_str()), ("judgement", "4.3.1"));
    assert!(r.text.contains("accidental (tracker confidence 0.30)"), "{}", r.text);
}

/// King and rook both in hand before either is set down: the king goes where castling puts it,
/// whichever was lifted last.
#[test]
fn castling_with_both_pieces_in_hand_puts_each_where_castling_does() {
    let script = "
        1.0 w1 lift e1
        2.0 w1 lift h1
        2.5 w1 release g1
        3.0 w1 release f1";
    let out = run(ITALIAN, Options::default(), script);
    assert_eq!(summary(&out), ["move O-O"]);
}

/// A touch the tracker doubts, of a piece then lifted, is certain from the lift: here the king's
/// doubtful touch does not leave the rook (lifted surely later) as the first certain touch; the
/// only ruling left rests on the doubtful pawn touch, so it is a judgement.
#[test]
fn a_doubtful_touch_is_made_certain_by_the_lift() {
    let script = "
        1.0 w1 touch g2 conf=0.5
        2.35 w1 touch e1 conf=0.55
        3.55 w1 lift e1 conf=0.95
        3.7 w1 release g1 conf=0.95
        5.2 w1 lift h1 conf=0.95
        5.35 w1 release f1 conf=0.95";
    let out = run(ITALIAN, Options { declarations: true, ..Options::default() }, script);
    assert_eq!(summary(&out), ["judgement 4.3.1", "move O-O"]);
    let Record::Ruling(r) = &out[0] else { unreachable!() };
    assert!(r.text.contains("pawn on g2 was accidental") && !r.text.contains("king on e1 was accidental"), "{}", r.text);
}

/// A breach certain from the sure touches alone, whose article and required move hang on a
/// doubtful touch: the bishop was surely lifted and put back (4.3.1 at least), the contact with
/// Black's f7 pawn is doubtful (4.3.3 if deliberate). The arbiter decides which; the ruling names
/// the stricter reading and says what is certain.
#[test]
fn a_certain_breach_whose_article_hangs_on_a_doubtful_touch_is_a_judgement() {
    let script = "
        1.2 w1 lift c4 conf=0.95
        1.7 w1 contact f7 conf=0.5
        3.4 w1 release c4 conf=0.95
        4.7 w1 lift e1 conf=0.95
        4.85 w1 release g1 conf=0.95
        6.5 w1 lift h1 conf=0.95
        6.6 w1 release f1 conf=0.95";
    let out = run(ITALIAN, Options { declarations: true, ..Options::default() }, script);
    assert_eq!(summary(&out), ["judgement 4.3.3", "move O-O"]);
    let Record::Ruling(r) = &out[0] else { unreachable!() };
    assert_eq!(r.required.iter().map(|m| m.to_string()).collect::<Vec<_>>(), ["Bc4xf7"]);
    assert!(r.text.contains("A breach is certain") && r.text.contains("under 4.3.1") && r.text.contains("pawn on f7 was accidental"), "{}", r.text);
}

/// A piece seen gone from its square and back a moment later, which the tracker doubts (the
/// readings may have lost it): the touch that lift made is doubtful, so moving another piece is
/// a judgement, not a violation. Put back surely, the same lift binds.
#[test]
fn a_doubted_put_back_makes_the_lift_a_doubtful_touch() {
    for (conf, verdict) in [(0.5, "judgement"), (0.95, "violation")] {
        let script = format!(
            "
            1.0 w1 lift a2 conf=0.95
            1.2 w1 release a2 conf={conf}
            2.0 w1 lift d2 conf=0.95
            2.3 w1 release d3 conf=0.95"
        );
        let out = run(ITALIAN, Options { declarations: true, ..Options::default() }, &script);
        assert_eq!(summary(&out), [format!("{verdict} 4.3.1"), "move d3".to_string()], "put back with conf {conf}");
    }
}

/// The move standing on the board is known before it is completed, and only while no piece of
/// the mover's is in hand.
#[test]
fn the_standing_move_is_known_before_completion() {
    let pos: Chess = ITALIAN.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap();
    let mut engine = Engine::new(pos, Options::default());
    let mut out = Vec::new();
    let standing = |engine: &Engine| engine.standing().map(|m| m.to_string());
    assert_eq!(standing(&engine), None);
    engine.apply(&Event::parse(r#"{"t":1.0,"hand":"w1","ev":"lift","sq":"d2"}"#, 1).unwrap(), &mut out);
    assert_eq!(standing(&engine), None, "the pawn is in hand");
    engine.apply(&Event::parse(r#"{"t":1.3,"hand":"w1","ev":"release","sq":"d3"}"#, 2).unwrap(), &mut out);
    assert_eq!(standing(&engine).as_deref(), Some("d2-d3"));
    assert!(out.iter().all(|r| !matches!(r, Record::Move(_))), "not completed yet: {out:?}");
    engine.apply(&Event::parse(r#"{"t":3.0,"hand":"b1","ev":"lift","sq":"a7"}"#, 3).unwrap(), &mut out);
    assert!(out.iter().any(|r| matches!(r, Record::Move(_))), "{out:?}");
}

/// Without a declaration channel, a piece touched first in doubt (0.5) and then surely (0.9) was
/// touched: the judgement hangs only on whether "j'adoube" was said, not on the first contact.
#[test]
fn a_doubtful_contact_then_a_sure_one_leaves_only_the_declaration_in_doubt() {
    let script = "
        0.45 w1 touch f3 conf=0.5
        2.35 w1 touch f3 conf=0.9
        3.6 w1 lift d2 conf=0.95
        5.0 w1 release d3 conf=0.95";
    let out = run(ITALIAN, Options::default(), script);
    assert_eq!(summary(&out), ["judgement 4.3.1", "move d3"]);
    let Record::Ruling(r) = &out[0] else { unreachable!() };
    assert!(r.text.contains("said \"j'adoube\" before touching the knight on f3") && !r.text.contains("accidental"), "{}", r.text);
}

#[test]
fn two_hands_are_an_illegal_move_only_when_the_tracker_is_sure_of_both() {
    // The captured pawn goes off with one hand, the bishop moves with the other.
    let script = |doubt: &str| format!("1 w2 lift f7\n2 w2 remove\n3 w1 lift c4 {doubt}\n4 w1 release f7 {doubt}\n5 w1 press");
    assert_eq!(summary(&run(ITALIAN, CLOCK, &script(""))), ["illegal 7.5.4", "move Bxf7+"]);
    // Doubt about the events themselves is not doubt about the hands.
    assert_eq!(summary(&run(ITALIAN, CLOCK, &script("conf=0.6"))), ["illegal 7.5.4", "move Bxf7+"]);
    // The tracker doubts the second hand is not the first one back.
    assert_eq!(summary(&run(ITALIAN, CLOCK, &script("hand_conf=0.6"))), ["judgement 7.5.4", "move Bxf7+"]);
    // Doubted at the lift only: the hand that released the bishop is the one that lifted it, so
    // it may be the first one back all the same.
    let lift_doubted = "1 w2 lift f7\n2 w2 remove\n3 w1 lift c4 hand_conf=0.6\n4 w1 release f7\n5 w1 press";
    assert_eq!(summary(&run(ITALIAN, CLOCK, lift_doubted)), ["judgement 7.5.4", "move Bxf7+"]);
}

#[test]
fn a_move_changed_after_a_doubtful_release_is_left_to_the_arbiter() {
    // Nf3 released, then the knight lifted again and put on h3: 4.7 requires Nf3. A
    // release the tracker doubts (a hand read as the knight where it passed) leaves it to the
    // arbiter.
    let fen = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    for (conf, verdict) in [(0.95, "violation"), (0.5, "judgement")] {
        let script = format!("1 w1 lift g1\n2 w1 release f3 conf={conf}\n3 w1 lift f3\n4 w1 release h3\n5 b1 lift e7");
        let out = run(fen, Options::default(), &script);
        assert_eq!(summary(&out)[..2], [format!("{verdict} 4.7"), "move Nh3".to_string()], "release conf {conf}: {out:?}");
    }
}

#[test]
fn a_hand_from_the_movers_edge_that_lifts_the_opponents_piece_after_the_move_plays_the_opponents_move() {
    // One person plays both sides from White's edge: every hand is read as White's.
    let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    let out = run(start, Options::default(), "1 w1 lift e2\n2 w1 release e4\n3 w1 lift e7\n4 w1 release e5\n5 w1 lift g1\n6 w1 release f3");
    assert_eq!(
        summary(&out),
        ["warning: w1 lifted Black's pawn on e7 after White made its move: taken as Black's hand, beginning Black's move.", "move e4", "move e5", "move Nf3"]
    );
    // Black's pawn taken off after White's en-passant capture is part of White's move.
    let fen = "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 3";
    let out = run(fen, Options::default(), "1 w1 lift e5\n2 w1 release d6\n3 w1 lift d5\n4 w1 remove\n5 b1 lift g8");
    assert_eq!(summary(&out), ["move exd6"]);
}

#[test]
fn at_the_end_of_the_input_a_move_stands_as_the_last_piece_moved_left_it() {
    // Nf3 released, then moved on to h3, then a stray touch and no clock press before the
    // recording ends: the 4.7 ruling and the move are dated at the knight's release on h3, the
    // breach, not at the touch that followed.
    let fen = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    let out = run(fen, CLOCK, "1 w1 lift g1\n2 w1 release f3\n3 w1 lift f3\n4 w1 release h3\n6.5 w1 touch b1 conf=0.5");
    assert_eq!(summary(&out), ["violation 4.7", "move Nh3"]);
    let (Record::Ruling(r), Record::Move(m)) = (&out[0], &out[1]) else { unreachable!() };
    assert_eq!((r.t, m.made_t, m.t), (4.0, 2.0, 4.0));
}
