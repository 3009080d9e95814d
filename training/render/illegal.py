"""Games with illegal moves that nobody noticed, as a series of stills, one a ply (as
`render.game` makes them), with labels: seeded random play in which the side in check now and
then makes a move that leaves its king in check (the commonest illegal move at a club), and
sometimes castles through check or moves a piece as another moves; the game goes on from the
board, as it does until someone notices.

    .venv/bin/python -m render.illegal --out /tmp/illegal --games 6 --seed 0
    touchmove eval /tmp/illegal

Each game's `labels.json` lists every move, the illegal ones with `"illegal": true`, and a
`7.5.1` ruling (`illegal`, the mover's) for each. The copies are generated: write them outside
the repository.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time

import chess
import numpy as np

from . import post
from .clip import fixed_camera, game_style
from .frames import _jsonable
from .game import Table, squares_text
from .scene import BoardScene, playing_corners


# The most illegal moves in one game.
MOST_ILLEGAL = 3


def illegal_moves(board: chess.Board) -> dict[str, list[chess.Move]]:
    """The side to move's illegal moves by kind: in its pieces' own patterns but leaving the king
    in check (castling through check among them), and a piece moved as another (a knight a
    bishop's step)."""
    legal = set(board.legal_moves)
    in_check = [m for m in board.pseudo_legal_moves if m not in legal and not board.is_castling(m)
                and board.piece_type_at(m.to_square) != chess.KING and not m.promotion]
    castle = []
    for rook_file, king_to in ((7, 6), (0, 2)):
        k = board.king(board.turn)
        rank = 0 if board.turn == chess.WHITE else 7
        m = chess.Move(chess.square(4, rank), chess.square(king_to, rank))
        path = [chess.square(f, rank) for f in (range(5, 7) if rook_file == 7 else range(1, 4))]
        if (k == chess.square(4, rank) and board.piece_at(chess.square(rook_file, rank)) == chess.Piece(chess.ROOK, board.turn)
                and board.has_castling_rights(board.turn) and not any(board.piece_at(s) for s in path) and m not in legal):
            castle.append(m)
    wrong = []
    for sq in board.pieces(chess.KNIGHT, board.turn):
        for d in (9, 7, -7, -9):
            to = sq + d
            if 0 <= to < 64 and abs(chess.square_file(to) - chess.square_file(sq)) == 1 and board.piece_at(to) is None:
                wrong.append(chess.Move(sq, to))
    return {"in_check": in_check, "castle": castle, "wrong": wrong}


def play_on(board: chess.Board, move: chess.Move):
    """Plays `move` on `board` whatever the rules say (a castling king takes its rook along)."""
    if board.is_castling(move) or (board.piece_type_at(move.from_square) == chess.KING
                                   and abs(chess.square_file(move.to_square) - chess.square_file(move.from_square)) == 2):
        rank = chess.square_rank(move.from_square)
        kingside = chess.square_file(move.to_square) == 6
        rook_from, rook_to = chess.square(7 if kingside else 0, rank), chess.square(5 if kingside else 3, rank)
        king = board.remove_piece_at(move.from_square)
        rook = board.remove_piece_at(rook_from)
        board.set_piece_at(move.to_square, king)
        board.set_piece_at(rook_to, rook)
        board.castling_rights &= ~chess.BB_RANK_1 if board.turn == chess.WHITE else ~chess.BB_RANK_8
        board.turn = not board.turn
        board.ep_square = None
        return
    board.push(move)


def script(rng: random.Random, plies: int) -> list[tuple[chess.Move, bool, chess.Board]]:
    """A game of `plies` plies: each move, whether it is illegal, and the board before it."""
    board = chess.Board()
    out = []
    while len(out) < plies:
        kinds = illegal_moves(board) if sum(1 for m in out if m[1]) < MOST_ILLEGAL else {"in_check": [], "castle": [], "wrong": []}
        pick = None
        if board.is_check() and kinds["in_check"] and rng.random() < 0.5:
            pick = rng.choice(kinds["in_check"])
        elif kinds["castle"] and rng.random() < 0.5:
            pick = rng.choice(kinds["castle"])
        elif len(out) > 6 and kinds["wrong"] and rng.random() < 0.03:
            pick = rng.choice(kinds["wrong"])
        if pick is not None:
            out.append((pick, True, board.copy(stack=False)))
            play_on(board, pick)
            continue
        legal = [m for m in board.legal_moves if board.piece_type_at(m.to_square) != chess.KING]
        # Checks and captures come often, as they do in fast games.
        checking = [m for m in legal if board.gives_check(m)]
        if not legal:
            break
        m = rng.choice(checking) if checking and rng.random() < 0.3 else rng.choice(legal)
        out.append((m, False, board.copy(stack=False)))
        board.push(m)
    return out


def render_game(out_dir: str, seed: list[int], plies: int, size, quality: int, command: str):
    """Renders one game into out_dir. Returns (photos, seconds spent)."""
    W, H = size
    rng = np.random.default_rng(seed)
    moves = script(random.Random(str(seed)), plies)
    board = chess.Board()
    scene = BoardScene(game_style(rng), W, H)
    table = Table(scene, board, rng)
    cam, cinfo, pp = fixed_camera(scene, rng)
    os.makedirs(out_dir, exist_ok=True)
    squares, labelled, rulings, spent = [], [], [], 0.0
    for k in range(len(moves) + 1):
        if k:
            m, illegal, before = moves[k - 1]
            if before.piece_type_at(m.from_square) == chess.KING and abs(chess.square_file(m.to_square) - chess.square_file(m.from_square)) == 2:
                rank = chess.square_rank(m.from_square)
                kingside = chess.square_file(m.to_square) == 6
                table._move(chess.square_name(m.from_square), chess.square_name(m.to_square))
                table._move(chess.square_name(chess.square(7 if kingside else 0, rank)), chess.square_name(chess.square(5 if kingside else 3, rank)))
            else:
                table.play(board, m)
            play_on(board, m)
            labelled.append({"uci": m.uci(), "from": k - 1, "to": k, **({"illegal": True} if illegal else {})})
            if illegal:
                rulings.append({"verdict": "illegal", "article": "7.5.1", "side": "w" if before.turn == chess.WHITE else "b",
                                "from": k - 1, "to": k})
        squares.append(squares_text(board))
        t0 = time.perf_counter()
        img = post.apply(scene.render(cam)["color"], pp, np.random.default_rng([*seed, k]))
        with open(os.path.join(out_dir, f"{k:04d}.jpg"), "wb") as f:
            f.write(post.jpeg_bytes(img, quality))
        spent += time.perf_counter() - t0
    labels = {
        "format": "touchmove-clip-labels/partial-1",
        "note": "Random play with illegal moves nobody noticed, rendered by training/render/illegal.py: one photo of the start "
                "and one after each ply, no hands.",
        "fen": chess.STARTING_FEN,
        "video": "*.jpg",
        "corners": np.round(cam.project(playing_corners(scene.s)), 2).tolist(),
        "fps": 1,
        "duration": len(moves) + 1,
        "moves": labelled,
        "rulings": rulings,
        "frames": [{"frame": k, "pieces": sq, "hands_over_board": 0} for k, sq in enumerate(squares)],
    }
    with open(os.path.join(out_dir, "labels.json"), "w") as f:
        json.dump(labels, f, indent=1)
    meta = {"seed": seed, "size": [W, H], "jpeg_quality": quality, "plies": len(moves), "command": command,
            "style": dict(scene.style), "camera": cam.to_json(), "camera_info": cinfo, "post": pp}
    with open(os.path.join(out_dir, "game.json"), "w") as f:
        json.dump(meta, f, default=_jsonable, indent=1)
    return len(moves) + 1, spent


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--games", type=int, default=6)
    ap.add_argument("--plies", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--size", default="640x480")
    ap.add_argument("--quality", type=int, default=60, help="JPEG quality")
    args = ap.parse_args(argv)
    W, H = (int(v) for v in args.size.lower().split("x"))
    command = "python -m render.illegal " + " ".join(argv if argv is not None else sys.argv[1:])
    for i in range(args.games):
        n, dt = render_game(os.path.join(args.out, f"illegal-{args.seed}-{i}"), [args.seed, 1000 + i], args.plies, (W, H),
                            args.quality, command)
        print(f"illegal-{args.seed}-{i}: {n} photos, {dt / n:.2f} s each", flush=True)


if __name__ == "__main__":
    sys.exit(main())
