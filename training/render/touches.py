"""Touch-heavy clips: random scripts in which players touch pieces before they move, rendered
with their labels, to fit and measure what the tracker says of touches.

    python -m render.touches --out DIR [--count 24] [--seed 50000] [--start 0]

Clip k (seed SEED + k) starts from a position of a game in games.pgn, drawn at random. The
player to move touches one to three pieces first, at random times, each one of:
- one of their own pieces, left where it stands (4.3.1 if another piece is then moved);
- one of the opponent's pieces (4.3.2);
- one of their own pieces after saying "j'adoube" (4.2, no ruling);
then makes a legal move (with the touched piece where the script draws that: no ruling). Half
the clips go on with the opponent's reply, touched first or not. The renderer decides what each
touch does to the piece (render.clip's DISPLACEMENT) and the labels say it. Clips already
written are skipped, so a stopped run resumes.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import random
import sys
import time

import chess
import chess.pgn

MIN_S = 10.5


def positions(pgn_path: str) -> list[str]:
    """The FEN before every ply from the 10th of every game of `pgn_path`."""
    out = []
    with open(pgn_path) as f:
        text = f.read()
    stream = io.StringIO(text)
    while (game := chess.pgn.read_game(stream)) is not None:
        board = game.board()
        for i, mv in enumerate(game.mainline_moves()):
            if i >= 10 and not board.is_check():
                out.append(board.fen())
            board.push(mv)
    return out


def E(t, ev, hand, sq=None):
    d = {"t": round(t, 2), "ev": ev}
    if sq:
        d["sq"] = sq
    d["hand"] = hand
    return d


def turn(rng: random.Random, board: chess.Board, t: float, hand: str, touches: int) -> tuple[list, float]:
    """Events of one player's turn from time t: `touches` touches, then a legal move (quiet or a
    capture, never castling, en passant or a promotion: those have their own fixtures)."""
    ev = []
    moves = [m for m in board.legal_moves if not (board.is_castling(m) or board.is_en_passant(m) or m.promotion)]
    mv = rng.choice(moves)
    own = [s for s in chess.SquareSet(board.occupied_co[board.turn]) if s != mv.from_square]
    theirs = list(chess.SquareSet(board.occupied_co[not board.turn]))
    touched = set()
    for _ in range(touches):
        kind = rng.choices(["own", "opponent", "adjust", "mover"], weights=[4, 2, 2, 1])[0]
        pool = {"own": own, "adjust": own, "opponent": theirs, "mover": [mv.from_square]}[kind]
        pool = [s for s in pool if s not in touched]
        if not pool:
            continue
        sq = rng.choice(pool)
        touched.add(sq)
        if kind == "adjust":
            ev.append(E(t - 0.4, "adjust", hand))
        ev.append(E(t, "touch", hand, chess.square_name(sq)))
        t += rng.uniform(1.3, 2.2)
    a, b = chess.square_name(mv.from_square), chess.square_name(mv.to_square)
    if board.is_capture(mv):
        ev.append(E(t, "remove", hand, b))
        t += rng.uniform(1.8, 2.2)
    ev += [E(t, "lift", hand, a), E(t + rng.uniform(0.8, 1.1), "release", hand, b)]
    t = ev[-1]["t"] + 0.8
    ev.append(E(t, "press", hand))
    board.push(mv)
    return ev, t + rng.uniform(1.0, 1.6)


def script(rng: random.Random, fens: list[str]) -> tuple[str, list]:
    """A start position and the events of one clip."""
    fen = rng.choice(fens)
    board = chess.Board(fen)
    hand = lambda: "w1" if board.turn == chess.WHITE else "b1"
    events, t = turn(rng, board, rng.uniform(0.8, 1.5), hand(), rng.choice([1, 1, 2, 2, 3]))
    if rng.random() < 0.5 and not board.is_game_over():
        more, t = turn(rng, board, t, hand(), rng.choice([0, 1, 1, 2]))
        events += more
    return fen, sorted(events, key=lambda e: e["t"])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--out", required=True)
    ap.add_argument("--count", type=int, default=24)
    ap.add_argument("--start", type=int, default=0, help="first clip index (to split a run between processes)")
    ap.add_argument("--seed", type=int, default=50000)
    ap.add_argument("--fps", type=int, default=20)
    args = ap.parse_args(argv)
    from .clip import render_clip
    fens = positions(os.path.join(here, "games.pgn"))
    for k in range(args.start, args.count):
        seed = args.seed + k
        fen, events = script(random.Random(seed), fens)
        d = os.path.join(args.out, f"touches-{seed}")
        if os.path.exists(os.path.join(d, "labels.json")):
            print(f"{d}: exists, skipped")
            continue
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "events.jsonl")
        with open(path, "w") as f:
            for e in events:
                f.write(json.dumps(e) + "\n")
        with open(os.path.join(d, "clip.json"), "w") as f:
            json.dump({"fen": fen, "seed": seed, "fps": args.fps,
                       "note": "touch-heavy script drawn by render.touches",
                       "command": f"python -m render.clip --fen '{fen}' --script events.jsonl --out . "
                                  f"--seed {seed} --fps {args.fps} --min-seconds {MIN_S}"}, f, indent=1)
        t0 = time.perf_counter()
        labels, _ = render_clip(fen, events, d, seed, args.fps, (640, 480), script_path=path, min_s=MIN_S)
        print(f"{d}: {labels['n_frames']} frames, {time.perf_counter() - t0:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
