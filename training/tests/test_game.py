"""Games mode: the pieces on the scene follow the game, and a game folder is what `touchmove
eval` reads.

Run from training/:  .venv/bin/python -m pytest -q tests/test_game.py
"""
from __future__ import annotations

import io
import json
import os
import sys

import chess.pgn
import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from render import game  # noqa: E402
from render.assets import shared_dir  # noqa: E402
from render.clip import game_style  # noqa: E402
from render.positions import board_dict  # noqa: E402
from render.scene import BoardScene  # noqa: E402

pytestmark = pytest.mark.skipif(not (shared_dir() / "assets").is_dir(), reason=f"no piece meshes at {shared_dir() / 'assets'} (set TOUCHMOVE_SHARED)")

# En passant, castling both ways, a capture that promotes.
PGN = """[White "A"]
[Black "B"]
[Date "2000.01.01"]
[SetUp "1"]
[FEN "r3k2r/6P1/8/3pP3/8/8/8/R3K2R w KQkq d6 0 1"]

1. exd6 O-O-O 2. O-O Rxd6 3. gxh8=Q+ Rd8 *
"""


def test_the_scene_follows_the_game():
    g = chess.pgn.read_game(io.StringIO(PGN))
    rng = np.random.default_rng(3)
    scene = BoardScene(game_style(rng), 160, 120)
    board = g.board()
    table = game.Table(scene, board, rng)
    for move in g.mainline_moves():
        table.play(board, move)
        board.push(move)
        assert {sq: p.letter for sq, p in table.at.items()} == board_dict(board.board_fen())
        on_board = [p for p in scene.pieces.values() if p.sq is not None]
        assert len(on_board) == len(board.piece_map())
    # off the board: the pawn taken e.p., the pawn taken on d6, the rook taken on h8, the
    # pawn that promoted
    assert sorted(p.letter for p in scene.pieces.values() if p.sq is None) == ["P", "P", "p", "r"]


def test_a_game_folder_is_labelled_and_resumable(tmp_path):
    pgn = tmp_path / "g.pgn"
    pgn.write_text(PGN)
    args = ["--out", str(tmp_path / "out"), "--pgn", str(pgn), "--size", "160x120"]
    game.main(args)
    d = tmp_path / "out" / "a-b-2000"
    assert sorted(f for f in os.listdir(d) if f.endswith(".jpg")) == [f"{k:04d}.jpg" for k in range(7)]
    labels = json.load(open(d / "labels.json"))
    assert labels["format"] == "touchmove-clip-labels/partial-1" and labels["video"] == "*.jpg"
    assert [m["uci"] for m in labels["moves"]] == ["e5d6", "e8c8", "e1g1", "d8d6", "g7h8q", "d6d8"]
    assert [(m["from"], m["to"]) for m in labels["moves"]][:2] == [(0, 1), (1, 2)]
    assert labels["frames"][1]["pieces"][chess.square_mirror(chess.D6)] == "P"
    mtime = os.path.getmtime(d / "0006.jpg")
    game.main(args)  # every photo exists: none is rendered again
    assert os.path.getmtime(d / "0006.jpg") == mtime
