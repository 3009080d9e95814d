"""Games mode: whole games from PGN files as a series of stills, one a ply, with labels.

    python -m render.game --out DIR [--pgn FILE ...] [--games N] [--seed S] [--size 640x480]

A camera fixed over the board takes one photo of the start position and one after each ply,
with no hand in view. Each game gets its own board, piece set, table, light and camera (from
the seed and its index). Captured pieces stand beside the board. Game i of a run is the
(i mod G)-th of the G games in the PGN files, so --games beyond G renders the same games again
in other scenes. Per game, in OUT/NAME/: `0000.jpg` (the start), `0001.jpg`, ... (after each
ply; no EXIF, so `touchmove` times photo k at k seconds), `labels.json`
(`touchmove-clip-labels/partial-1`: ply k is made in the window [k-1, k] s; the board in every
photo), `game.pgn` and `game.json` (seed, scene, camera, the command). A photo that exists is
not rendered again.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time

import chess
import chess.pgn
import numpy as np

from . import post
from .clip import fixed_camera, game_style, set_down
from .frames import _jsonable, put_beside
from .positions import board_dict
from .scene import BoardScene, playing_corners

PGN = os.path.join(os.path.dirname(__file__), "games.pgn")


def read_games(paths):
    """The games of the PGN files, in order; a game with an illegal move is an error."""
    games = []
    for path in paths:
        with open(path) as f:
            while (game := chess.pgn.read_game(f)) is not None:
                if game.errors:
                    raise SystemExit(f"{path}: {game.headers.get('White')} - {game.headers.get('Black')}: {game.errors[0]}")
                games.append(game)
    if not games:
        raise SystemExit(f"{', '.join(paths)}: no games")
    return games


def game_name(game) -> str:
    """`white-black-year` from the headers, by surname."""
    def surname(tag):
        return re.sub(r"[^a-z]+", "-", game.headers.get(tag, "?").split(",")[0].split("/")[0].strip().lower()).strip("-")
    year = game.headers.get("Date", "????")[:4]
    return f"{surname('White')}-{surname('Black')}-{year}"


def squares_text(board: chess.Board) -> str:
    """The 64 squares in FEN reading order (a8, b8, ..., h1): a piece's letter or `.`."""
    return "".join((p.symbol() if (p := board.piece_at(chess.square(f, r))) else ".") for r in range(7, -1, -1)
                   for f in range(8))


class Table:
    """The pieces of a game on the scene: on their squares, or beside the board once off it."""

    def __init__(self, scene: BoardScene, board: chess.Board, rng):
        self.scene, self.rng = scene, rng
        self.at = {sq: scene.add_piece(letter, sq, *set_down(scene, rng, letter, sq))
                   for sq, letter in sorted(board_dict(board.board_fen()).items())}
        self.off = {chess.WHITE: 0, chess.BLACK: 0}
        self.side = -scene.style["distractors"]["side"]

    def _take_off(self, sq: str):
        p = self.at.pop(sq)
        colour = p.letter.isupper()
        k = self.off[colour]
        self.off[colour] += 1
        put_beside(self.scene, p, 2 * (not colour) + k % 2, k // 2, self.side, self.rng)

    def _move(self, a: str, b: str):
        p = self.at.pop(a)
        p.xy, p.yaw = set_down(self.scene, self.rng, p.letter, b)
        p.sq = b
        self.scene.update_piece(p)
        self.at[b] = p

    def play(self, board: chess.Board, move: chess.Move):
        """Makes `move` (legal in `board`, before it is pushed) on the scene."""
        a, b = chess.square_name(move.from_square), chess.square_name(move.to_square)
        if board.is_en_passant(move):
            self._take_off(chess.square_name(move.to_square - 8 if board.turn == chess.WHITE else move.to_square + 8))
        elif b in self.at:
            self._take_off(b)
        if board.is_castling(move):
            rank = a[1]
            rook_from, rook_to = ("h", "f") if b[0] == "g" else ("a", "d")
            self._move(rook_from + rank, rook_to + rank)
        if move.promotion:
            self._take_off(a)
            letter = chess.Piece(move.promotion, board.turn).symbol()
            self.at[b] = self.scene.add_piece(letter, b, *set_down(self.scene, self.rng, letter, b))
        else:
            self._move(a, b)


def render_game(game, out_dir: str, seed: list[int], size, quality: int, command: str):
    """Renders one game into out_dir, skipping photos that exist. Returns (photos rendered,
    seconds spent rendering them)."""
    W, H = size
    rng = np.random.default_rng(seed)
    board = game.board()
    start_fen = board.fen()
    scene = BoardScene(game_style(rng), W, H)
    table = Table(scene, board, rng)
    cam, cinfo, pp = fixed_camera(scene, rng)
    moves = list(game.mainline_moves())
    os.makedirs(out_dir, exist_ok=True)
    squares, uci, rendered, spent = [], [], 0, 0.0
    for k in range(len(moves) + 1):
        if k:
            table.play(board, moves[k - 1])
            uci.append(board.uci(moves[k - 1]))
            board.push(moves[k - 1])
        squares.append(squares_text(board))
        path = os.path.join(out_dir, f"{k:04d}.jpg")
        if os.path.exists(path):
            continue
        t0 = time.perf_counter()
        img = post.apply(scene.render(cam)["color"], pp, np.random.default_rng([*seed, k]))
        with open(path + ".tmp", "wb") as f:
            f.write(post.jpeg_bytes(img, quality))
        os.replace(path + ".tmp", path)
        rendered += 1
        spent += time.perf_counter() - t0
    n = len(moves)
    labels = {
        "format": "touchmove-clip-labels/partial-1",
        "note": f"{game.headers.get('White')} - {game.headers.get('Black')}, {game.headers.get('Site')} "
                f"{game.headers.get('Date')} ({game.headers.get('Result')}), rendered by training/render/game.py: "
                f"one photo of the start and one after each ply, no hands; game.json has the seed and scene.",
        "fen": start_fen,
        "video": "*.jpg",
        "corners": np.round(cam.project(playing_corners(scene.s)), 2).tolist(),
        "fps": 1,
        "duration": n + 1,
        "moves": [{"uci": u, "from": k, "to": k + 1} for k, u in enumerate(uci)],
        "rulings": [],
        "frames": [{"frame": k, "pieces": sq, "hands_over_board": 0} for k, sq in enumerate(squares)],
    }
    with open(os.path.join(out_dir, "labels.json"), "w") as f:
        json.dump(labels, f, indent=1)
    with open(os.path.join(out_dir, "game.pgn"), "w") as f:
        print(game, file=f, end="\n\n")
    meta = {"seed": seed, "size": [W, H], "jpeg_quality": quality, "plies": n, "command": command,
            "style": dict(scene.style), "camera": cam.to_json(), "camera_info": cinfo, "post": pp}
    with open(os.path.join(out_dir, "game.json"), "w") as f:
        json.dump(meta, f, default=_jsonable, indent=1)
    return rendered, spent


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--pgn", nargs="+", default=[PGN], help="PGN files (default: render/games.pgn)")
    ap.add_argument("--games", type=int, default=None, help="how many games (default: each game of the files once)")
    ap.add_argument("--only", nargs="+", default=None, help="render only these game names")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--size", default="640x480")
    ap.add_argument("--quality", type=int, default=60, help="JPEG quality")
    args = ap.parse_args(argv)
    W, H = (int(v) for v in args.size.lower().split("x"))
    games = read_games(args.pgn)
    command = "python -m render.game " + " ".join(argv if argv is not None else sys.argv[1:])
    total, spent = 0, 0.0
    for i in range(args.games if args.games is not None else len(games)):
        game = games[i % len(games)]
        name = game_name(game) + (f"-{i // len(games)}" if i >= len(games) else "")
        if args.only and name not in args.only:
            continue
        n, dt = render_game(game, os.path.join(args.out, name), [args.seed, i], (W, H), args.quality, command)
        total, spent = total + n, spent + dt
        print(f"{name}: {n} photos rendered" + (f", {dt / n:.2f} s each" if n else ""), flush=True)
    if total:
        print(f"{total} photos, {spent / total:.2f} s each")


if __name__ == "__main__":
    sys.exit(main())
