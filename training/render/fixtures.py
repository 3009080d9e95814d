"""The committed fixture clips: their start positions and event scripts, and a runner.

    python -m render.fixtures [--out ../fixtures/clips] [--only NAME ...] [--force]
    python -m render.fixtures --out ../fixtures/variants --seed-offset 1000

Each clip goes to OUT/NAME/: clip.mp4, events.jsonl, labels.json. Existing clips are skipped
unless --force. Scenario numbers refer to ../shared/rules/article4-scenarios.md. With
--seed-offset the same scripts are rendered from other seeds (another camera, light, board,
piece set and hand): ../fixtures/variants, which no threshold was tuned on.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import chess

START = chess.STARTING_FEN
MIN_S = 10.5  # every fixture is at least this long (the issue asks for 10-30 s)
# hand-motion planner version (render.clip --planner): 2 lifts hands off before travelling, arcs
# over the pieces on the way and keeps resting hands clear of pieces
OPEN_BOTH_CASTLE = "r3kbnr/pppqpppp/2n5/3p1b2/3P4/5NP1/PPP1PPBP/RNBQK2R w KQkq - 4 5"  # 1.d4 d5 2.Nf3 Nc6 3.g3 Bf5 4.Bg2 Qd7
ITALIAN = "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4"  # S08/S13
E4E5 = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"  # S01
S05 = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"
S25 = "r3k2r/ppp2ppp/8/8/2b5/8/PPP2PPP/R3K2R w KQkq - 0 1"
EP = "rnbqkb1r/ppp1pppp/5n2/3pP3/8/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 3"  # 1.e4 Nf6 2.e5 d5
PROMO = "8/4P1k1/8/8/8/8/6K1/8 w - - 0 1"


def E(t, ev, hand, sq=None, piece=None):
    d = {"t": round(t, 2), "ev": ev}
    if sq:
        d["sq"] = sq
    if piece:
        d["piece"] = piece
    d["hand"] = hand
    return d


def move(t, hand, a, b, press=True, dur=0.9):
    """lift a, release b, press: a normal quiet move starting at t."""
    ev = [E(t, "lift", hand, a), E(t + dur, "release", hand, b)]
    if press:
        ev.append(E(t + dur + 0.8, "press", hand))
    return ev


def castle(t, hand, k0, k1, r0, r1, press=True, hand_rook=None):
    ev = [E(t, "lift", hand, k0), E(t + 0.8, "release", hand, k1),
          E(t + 1.7, "lift", hand_rook or hand, r0), E(t + 2.4, "release", hand_rook or hand, r1)]
    if press:
        ev.append(E(t + 3.2, "press", hand_rook or hand))
    return ev


CLIPS = {
    # ---------------------------------------------------------------- clean play
    "clean-castling": dict(
        fen=OPEN_BOTH_CASTLE, seed=101,
        note="O-O by White, O-O-O by Black, one hand each, clocks pressed: no ruling.",
        events=castle(1.0, "w1", "e1", "g1", "h1", "f1") + castle(6.0, "b1", "e8", "c8", "a8", "d8")),
    "clean-enpassant-capture": dict(
        fen=EP, seed=102,
        note="exd6 e.p. (captured pawn removed first), then ...cxd6 (capture): no ruling.",
        events=[E(1.0, "remove", "w1", "d5"), E(3.0, "lift", "w1", "e5"), E(3.9, "release", "w1", "d6"),
                E(4.7, "press", "w1"),
                E(6.5, "remove", "b1", "d6"), E(8.5, "lift", "b1", "c7"), E(9.4, "release", "b1", "d6"),
                E(10.2, "press", "b1")]),
    "clean-promotion": dict(
        fen=PROMO, seed=103,
        note="e8=Q: pawn released on e8, removed, queen placed (S41); then ...Kh6: no ruling.",
        events=[E(1.0, "lift", "w1", "e7"), E(1.9, "release", "w1", "e8"), E(3.0, "remove", "w1", "e8"),
                E(6.2, "place", "w1", "e8", "Q"), E(7.0, "press", "w1")] + move(8.8, "b1", "g7", "h6")),
    # ---------------------------------------------------------------- two hands
    "two-hands-castling": dict(
        fen=OPEN_BOTH_CASTLE, seed=104,
        note="S31: king with one hand, rook with the other: 7.5.4 illegal.",
        events=castle(1.0, "w2", "e1", "g1", "h1", "f1", hand_rook="w1")),
    "two-hands-capture": dict(
        fen=ITALIAN, seed=105,
        note="S35: captured pawn removed with one hand, the bishop moved with the other: 7.5.4 illegal.",
        events=[E(1.0, "remove", "w2", "f7"), E(3.0, "lift", "w1", "c4"), E(3.9, "release", "w1", "f7"),
                E(4.7, "press", "w1")]),
    # ---------------------------------------------------------------- 4.3
    "touch-own-4.3.1": dict(
        fen=E4E5, seed=106,
        note="S01: touches Ng1, then plays Bc4: 4.3.1, the knight must move.",
        events=[E(1.0, "touch", "w1", "g1")] + move(3.5, "w1", "f1", "c4")),
    "touch-opponent-4.3.2": dict(
        fen=S05, seed=107,
        note="S05: touches the e5 pawn, then plays Bc4: 4.3.2, Nxe5 required.",
        events=[E(1.0, "touch", "w1", "e5")] + move(3.5, "w1", "f1", "c4")),
    "touch-both-4.3.3": dict(
        fen=ITALIAN, seed=108,
        note="S08: lifts Bc4, the bishop touches f7, puts it back and castles: 4.3.3, Bxf7+ required.",
        events=[E(1.0, "lift", "w1", "c4"), E(1.9, "contact", "w1", "f7"), E(2.8, "release", "w1", "c4")]
        + castle(4.6, "w1", "e1", "g1", "h1", "f1")),
    # ---------------------------------------------------------------- 4.4
    "king-rook-4.4.1": dict(
        fen=OPEN_BOTH_CASTLE, seed=109,
        note="S22 (touches in sequence): king then rook touched, then Kf1: 4.4.1, O-O required.",
        events=[E(1.0, "touch", "w1", "e1"), E(2.2, "touch", "w1", "h1")] + move(3.8, "w1", "e1", "f1")),
    "rook-first-4.4.2": dict(
        fen=OPEN_BOTH_CASTLE, seed=110,
        note="S23: rook touched first, then the player castles: 4.4.2, a rook move is required.",
        events=[E(1.0, "touch", "w1", "h1")] + castle(2.8, "w1", "e1", "g1", "h1", "f1")),
    "castle-illegal-4.4.3": dict(
        fen=S25, seed=111,
        note="S25 variant: king then rook touched, O-O illegal (f1 attacked), then Rf1: 4.4.3, a king move "
             "(Kd1, Kd2, O-O-O) required.",
        events=[E(1.0, "touch", "w1", "e1"), E(2.2, "touch", "w1", "h1")] + move(3.8, "w1", "h1", "f1")),
    "promotion-switch-4.4.4": dict(
        fen=PROMO, seed=112,
        note="S43: pawn removed, the queen touches e8, is withdrawn, a knight is placed: 4.4.4, e8=Q required.",
        events=[E(1.0, "remove", "w1", "e7"), E(4.4, "contact", "w1", "e8", "Q"),
                E(8.6, "place", "w1", "e8", "N"), E(9.4, "press", "w1")]),
    # ---------------------------------------------------------------- 4.7
    "released-moved-again-4.7": dict(
        fen=E4E5, seed=113,
        note="S48: Nf3 released, then lifted again and put on e2: 4.7, the move is Nf3.",
        events=move(1.0, "w1", "g1", "f3", press=False) + move(3.2, "w1", "f3", "e2")),
    # ---------------------------------------------------------------- adjusting, knocking
    "adjust-declared": dict(
        fen=ITALIAN, seed=114,
        note="S13: j'adoube declared, Nf3 touched (centred), then O-O: no ruling with --declarations.",
        events=[E(0.8, "adjust", "w1"), E(1.2, "touch", "w1", "f3")] + castle(3.4, "w1", "e1", "g1", "h1", "f1")),
    "adjust-undeclared": dict(
        fen=ITALIAN, seed=115,
        note="S14: Nf3 touched (centred) without a declaration, then O-O: 4.3.1, a knight move is required.",
        events=[E(1.2, "touch", "w1", "f3")] + castle(3.4, "w1", "e1", "g1", "h1", "f1")),
    "knocked-piece": dict(
        fen=ITALIAN, seed=116,
        note="S19: Ng5 played, the hand knocks over b2, sets it upright, presses.",
        events=move(1.0, "w1", "f3", "g5", press=False) + [E(3.2, "knock", "w1", "b2"), E(4.6, "touch", "w1", "b2"),
                                                           E(6.0, "press", "w1")]),
}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--out", default=os.path.normpath(os.path.join(here, "..", "..", "fixtures", "clips")))
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--force", action="store_true")
    ap.add_argument("--fps", type=int, default=20)
    ap.add_argument("--scripts-only", action="store_true", help="write events.jsonl files only")
    ap.add_argument("--planner", type=int, default=2, choices=(1, 2))
    ap.add_argument("--seed-offset", type=int, default=0, help="added to every clip's seed")
    args = ap.parse_args(argv)
    from .clip import load_events, render_clip
    names = args.only or list(CLIPS)
    for name in names:
        c = dict(CLIPS[name], seed=CLIPS[name]["seed"] + args.seed_offset)
        chess.Board(c["fen"])
        d = os.path.join(args.out, name)
        os.makedirs(d, exist_ok=True)
        script = os.path.join(d, "events.jsonl")
        with open(script, "w") as f:
            for e in c["events"]:
                f.write(json.dumps(e) + "\n")
        with open(os.path.join(d, "clip.json"), "w") as f:
            json.dump({"fen": c["fen"], "seed": c["seed"], "fps": args.fps, "note": c["note"],
                       "command": f"python -m render.clip --fen '{c['fen']}' --script events.jsonl "
                                  f"--out . --seed {c['seed']} --fps {args.fps} --min-seconds {MIN_S} "
                                  f"--planner {args.planner}"}, f, indent=1)
        if args.scripts_only:
            continue
        if os.path.exists(os.path.join(d, "labels.json")) and not args.force:
            print(f"{name}: exists, skipped")
            continue
        t0 = time.perf_counter()
        labels, dt = render_clip(c["fen"], load_events(script), d, c["seed"], args.fps, (640, 480),
                                 script_path=script, min_s=MIN_S, planner=args.planner)
        mb = os.path.getsize(os.path.join(d, "clip.mp4")) / 1e6
        print(f"{name}: {labels['n_frames']} frames, {dt:.0f} s, {mb:.2f} MB, "
              f"unscripted contacts: {len(labels['unscripted_contacts'])}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
