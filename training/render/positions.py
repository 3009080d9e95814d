"""Positions that look like real games: start, openings, middlegames, endgames, promotions.

No game database is available offline, so games are played by a cheap heuristic mover
(captures by value, development, centre, not leaving pieces en prise, random noise), which gives
pawn structures and piece distributions much closer to real play than uniform random moves.
"""
from __future__ import annotations

import chess
import numpy as np

VAL = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9, chess.KING: 0}
CENTRE = {chess.D4, chess.E4, chess.D5, chess.E5, chess.C4, chess.F4, chess.C5, chess.F5}


def _score(b: chess.Board, m: chess.Move, rng, ply):
    s = rng.normal(0, 0.6)
    if b.is_capture(m):
        victim = b.piece_at(m.to_square)
        s += 2.0 + VAL[victim.piece_type] if victim else 2.0
    pc = b.piece_at(m.from_square)
    if m.promotion:
        s += 6 if m.promotion == chess.QUEEN else 1
    if ply < 20:
        if pc.piece_type in (chess.KNIGHT, chess.BISHOP) and chess.square_rank(m.from_square) in (0, 7):
            s += 1.2
        if m.to_square in CENTRE:
            s += 0.8
        if pc.piece_type == chess.QUEEN:
            s -= 0.8
        if pc.piece_type == chess.KING and not b.is_castling(m):
            s -= 2.0
    if b.is_castling(m):
        s += 2.5
    b.push(m)
    if b.is_attacked_by(b.turn, m.to_square) and not b.is_attacked_by(not b.turn, m.to_square):
        s -= 0.9 * VAL[pc.piece_type] + 0.3
    if b.is_checkmate():
        s += 50
    b.pop()
    return s


def play(rng, plies: int, board: chess.Board | None = None) -> chess.Board:
    b = board or chess.Board()
    for ply in range(plies):
        moves = list(b.legal_moves)
        if not moves or b.is_game_over():
            break
        sc = [_score(b, m, rng, len(b.move_stack)) for m in moves]
        b.push(moves[int(np.argmax(sc))])
    return b


def random_endgame(rng) -> chess.Board:
    for _ in range(200):
        b = chess.Board(None)
        sqs = list(rng.permutation(64))
        b.set_piece_at(int(sqs.pop()), chess.Piece(chess.KING, chess.WHITE))
        b.set_piece_at(int(sqs.pop()), chess.Piece(chess.KING, chess.BLACK))
        for colour in (chess.WHITE, chess.BLACK):
            n_p = int(rng.integers(0, 6))
            for _ in range(n_p):
                sq = int(sqs.pop())
                if chess.square_rank(sq) in (0, 7):
                    continue
                b.set_piece_at(sq, chess.Piece(chess.PAWN, colour))
            for pt in rng.choice([chess.ROOK, chess.KNIGHT, chess.BISHOP, chess.QUEEN, chess.ROOK],
                                 size=int(rng.integers(0, 3)), replace=False):
                b.set_piece_at(int(sqs.pop()), chess.Piece(int(pt), colour))
        b.turn = bool(rng.integers(2))
        if b.is_valid():
            return b
    return chess.Board()


def add_promotions(rng, b: chess.Board) -> chess.Board:
    """Replace pawns by extra queens (the case 'promotion with extra queens'), sometimes two."""
    b = b.copy(stack=False)
    for colour in (chess.WHITE, chess.BLACK):
        pawns = list(b.pieces(chess.PAWN, colour))
        k = int(rng.integers(0 if colour != chess.WHITE else 1, 3))
        for sq in rng.permutation(pawns)[:k] if pawns else []:
            b.remove_piece_at(int(sq))
            empties = [s for s in chess.SQUARES if b.piece_at(s) is None]
            tgt = int(rng.choice(empties))
            pt = chess.QUEEN if rng.random() < 0.85 else int(rng.choice([chess.KNIGHT, chess.ROOK]))
            b.set_piece_at(tgt, chess.Piece(pt, colour))
    return b


def sample_position(rng) -> tuple[str, str]:
    """Returns (kind, board FEN part)."""
    u = rng.random()
    if u < 0.08:
        return "start", chess.Board().board_fen()
    if u < 0.30:
        return "opening", play(rng, int(rng.integers(2, 20))).board_fen()
    if u < 0.70:
        return "middlegame", play(rng, int(rng.integers(20, 70))).board_fen()
    if u < 0.90:
        if rng.random() < 0.5:
            return "endgame", play(rng, int(rng.integers(70, 140))).board_fen()
        return "endgame", random_endgame(rng).board_fen()
    return "promotion", add_promotions(rng, play(rng, int(rng.integers(30, 90)))).board_fen()


def board_dict(fen_board: str) -> dict[str, str]:
    b = chess.Board(None)
    b.set_board_fen(fen_board)
    return {chess.square_name(s): p.symbol() for s, p in b.piece_map().items()}
