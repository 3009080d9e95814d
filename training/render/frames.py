"""Frames mode: many labelled single frames for training, resumable in chunks.

    python -m render.frames --out DIR --count N --seed S [--start K] [--size 640x480]

Frame i of seed S is a pure function of (S, i): a chunk can be re-run, split across processes
(--start/--count) or resumed; frames whose label file exists are skipped. Files per frame:
`NNNNNNN.jpg` (image), `NNNNNNN.json` (labels, written last), `NNNNNNN_hand.png` (hand mask).
See training/README.md for the label format.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import cv2
import numpy as np

from . import post
from .camera import sample_camera
from .placing import HandSpec, grasp, hover, rest, touch
from .positions import board_dict, sample_position
from .scene import CONTACT_MM, SQUARES, BoardScene, playing_corners, sample_style, sq_xy

FILES = "abcdefgh"


def _captured_pieces(present: dict[str, str]) -> list[str]:
    full = {"K": 1, "Q": 1, "R": 2, "B": 2, "N": 2, "P": 8}
    out = []
    for colour in ("w", "b"):
        for L, n in full.items():
            letter = L if colour == "w" else L.lower()
            have = sum(1 for v in present.values() if v == letter)
            out += [letter] * max(0, n - have)
    return out


def build_frame_scene(rng, W, H):
    style = sample_style(rng)
    scene = BoardScene(style, W, H)
    kind, fen = sample_position(rng)
    pos = board_dict(fen)
    s = scene.s
    for sq, letter in sorted(pos.items()):
        off = rng.normal(0, 0.05 * s, 2) if rng.random() < 0.7 else rng.normal(0, 0.12 * s, 2)
        off = np.clip(off, -0.2 * s, 0.2 * s)
        if letter.lower() == "n":
            yaw = (np.pi / 2 if letter.isupper() else -np.pi / 2) + rng.normal(0, 0.6)
        else:
            yaw = rng.uniform(0, 2 * np.pi)
        scene.add_piece(letter, sq, sq_xy(sq, s) + off, yaw)
    if style["distractors"]["captured"]:
        cap = _captured_pieces(pos)
        rng.shuffle(cap)
        side = -style["distractors"]["side"]
        for i, letter in enumerate(cap[: int(rng.integers(0, len(cap) + 1))]):
            p = scene.add_piece(letter, None, [0.0, 0.0], 0.0)
            put_beside(scene, p, 0 if letter.isupper() else 1, i // 2, side, rng)
    return scene, kind, fen


def put_beside(scene: BoardScene, p, row: int, slot: int, side: float, rng):
    """Stands piece p on the table beside the board, off any square: in row `row` out from the
    board's edge on `side` (+1 or -1 along x), at place `slot` along it."""
    half = scene.board_total / 2
    x = side * (half + 0.03 + row * 0.045 + rng.normal(0, 0.004))
    y = -half + 0.03 + slot * 0.045 + rng.normal(0, 0.004)
    p.xy, p.yaw = np.array([x, y]), rng.uniform(0, 6.28)
    p.pose = scene.standing_pose(p.xy, p.yaw, z=scene.table_z)
    p.sq = None
    scene.update_piece(p)


def place_hands(scene: BoardScene, rng):
    """0-3 hands. Returns list of (HandInst, info) and the held pieces."""
    n = int(rng.choice([0, 1, 1, 1, 2, 2, 3], p=[0.18, 0.2, 0.2, 0.14, 0.12, 0.1, 0.06]))
    hands, held = [], []
    on_board = [p for p in scene.pieces.values() if p.sq is not None]
    used_pieces = set()
    owners = []
    for k in range(n):
        owner = "w" if rng.random() < 0.5 else "b"
        if sum(1 for x in owners if x[0] == owner) >= 2:  # a player has two hands
            owner = "b" if owner == "w" else "w"
        n_own = sum(1 for x in owners if x[0] == owner)
        spec = HandSpec.sample(rng, f"{owner}{n_own + 1}", owner)
        if n_own == 1:  # the player's second hand is the other one
            first = next(x[1] for x in owners if x[0] == owner)
            spec.side = "left" if first == "right" else "right"
        owners.append((owner, spec.side))
        value = k + 1
        body_x = rng.normal(0, 0.06)
        spec.set_body(scene, body_x, rng=rng)
        mode = str(rng.choice(["grasp", "touch", "hover", "rest", "lift"], p=[0.33, 0.17, 0.3, 0.08, 0.12]))
        cands = [p for p in on_board if p.id not in used_pieces]
        if mode in ("grasp", "touch", "lift") and not cands:
            mode = "hover"
        try:
            if mode in ("grasp", "lift"):
                p = cands[int(rng.integers(len(cands)))]
                used_pieces.add(p.id)
                if mode == "lift":
                    # lift it, possibly carried over another square
                    dz = rng.uniform(0.01, 0.08)
                    dxy = rng.normal(0, scene.s * 1.2, 2) if rng.random() < 0.6 else np.zeros(2)
                    h, info = grasp(scene, spec, p, rng, value, body_x)
                    lift = np.r_[dxy, dz]
                    p.pose = scene.piece_world_pose(p).copy()
                    p.pose[:3, 3] += lift
                    p.held_by = spec.hid
                    scene.update_piece(p)
                    h = _shift_hand(h, lift)
                    held.append((p, spec.hid))
                    info["mode"] = "lift"
                else:
                    h, info = grasp(scene, spec, p, rng, value, body_x)
                info["piece_sq"] = p.sq
            elif mode == "touch":
                p = cands[int(rng.integers(len(cands)))]
                used_pieces.add(p.id)
                h, info = touch(scene, spec, p, rng, value, body_x)
                info["piece_sq"] = p.sq
            elif mode == "hover":
                xy = rng.uniform(-0.55, 0.55, 2) * scene.board_total
                h, info = hover(scene, spec, xy, rng, value, body_x)
            else:
                h, info = rest(scene, spec, rng, value, body_x)
        except Exception as e:  # a failed placement must not kill a 20k-frame run
            print(f"  hand placement failed ({mode}): {e}", file=sys.stderr)
            continue
        info["spec"] = spec
        hands.append((h, info))
    return hands, held


def _shift_hand(h, d):
    g = h.geom
    for m in g.all_meshes():
        m.vertices = m.vertices + d
    g.joints = g.joints + d
    g.T = g.T.copy()
    g.T[:3, 3] += d
    return h


def labels_for(scene: BoardScene, cam, out, hands, held):
    s = scene.s
    corners = cam.project(playing_corners(s))
    pieces = ["." for _ in SQUARES]
    sq_index = {sq: i for i, sq in enumerate(SQUARES)}
    pid_at = {}
    for p in scene.pieces.values():
        if p.sq is not None and p.held_by is None:
            pieces[sq_index[p.sq]] = p.letter
            pid_at[p.id] = p.sq
    cov = scene.square_coverage(cam, out["seg_und"], out["pad"])
    dists = scene.hand_piece_distances([h for h, _ in hands])
    contact = [False] * 64
    hand_labels = []
    for h, info in hands:
        csq = []
        for pid, d in dists[h.hid].items():
            if pid in pid_at and d < CONTACT_MM / 1000:
                contact[sq_index[pid_at[pid]]] = True
                csq.append(pid_at[pid])
        m = out["mask"]
        ys, xs = np.nonzero((m == h.value) | (m == 64 + h.value) | (m == 128 + h.value))
        hand_labels.append({
            "value": h.value, "hand": h.hid, "owner": info["spec"].owner, "side": info["spec"].side,
            "mode": info["mode"], "target_sq": info.get("piece_sq"), "contact_sq": sorted(csq),
            "min_dist_mm": round(1000 * min(dists[h.hid].values()), 2) if dists[h.hid] else None,
            "bbox": [int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max())] if len(xs) else None,
            "skin": [round(c, 3) for c in info["spec"].skin],
        })
    fen_rows = []
    for r in range(8):
        row, e = "", 0
        for f in range(8):
            c = pieces[r * 8 + f]
            if c == ".":
                e += 1
            else:
                row += (str(e) if e else "") + c
                e = 0
        fen_rows.append(row + (str(e) if e else ""))
    return {
        "size": [cam.W, cam.H],
        "corners": np.round(corners, 2).tolist(),
        "corners_order": "a8,h8,h1,a1 (outer corners of the 8x8 playing area, pixels)",
        "fen": "/".join(fen_rows),
        "square_order": "a8,b8,...,h8,a7,...,h1 (FEN reading order)",
        "pieces": pieces,
        "hand_cover": [round(float(c), 4) for c in cov],
        "contact": contact,
        "hands_over_board": int(sum(1 for h, _ in hands if _over_board(scene, h))),
        "hands": hand_labels,
        "held": [{"piece": p.letter, "hand": hid, "from_sq": p.sq} for p, hid in held],
        "camera": cam.to_json(),
        "square_m": round(s, 5),
    }


def _over_board(scene, h):
    half = 4 * scene.s
    v = h.geom.hand.vertices
    return bool(np.any((np.abs(v[:, 0]) < half) & (np.abs(v[:, 1]) < half)))


def render_one(seed: int, index: int, W: int, H: int, seg_pieces=False):
    rng = np.random.default_rng([seed, index])
    scene, kind, fen = build_frame_scene(rng, W, H)
    hands, held = place_hands(scene, rng)
    scene.set_hands([h for h, _ in hands])
    outline = np.array([[x, y, 0] for x in (-1, 1) for y in (-1, 1)]) * scene.board_total / 2
    cam, cinfo = sample_camera(rng, W, H, outline, [0, 0, 0], "frames")
    out = scene.render(cam, seg_pieces=seg_pieces)
    lab = labels_for(scene, cam, out, hands, held)
    pp = post.sample_post(rng)
    motion = None
    if hands and rng.random() < 0.35:
        ang = rng.uniform(0, 2 * np.pi)
        motion = np.array([np.cos(ang), np.sin(ang)]) * rng.uniform(3, 28)
    img = post.apply(out["color"], pp, rng, out["mask"] if motion is not None else None, motion)
    lab.update({"seed": seed, "index": index, "position_kind": kind,
                "style": {k: v for k, v in scene.style.items()}, "camera_info": cinfo,
                "post": {**pp, "hand_motion_px": None if motion is None else np.round(motion, 1).tolist()}})
    return img, out, lab, scene, cam


def _jsonable(o):
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, (np.bool_,)):
        return bool(o)
    raise TypeError(type(o))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--size", default="640x480")
    args = ap.parse_args(argv)
    W, H = (int(v) for v in args.size.lower().split("x"))
    os.makedirs(args.out, exist_ok=True)
    done = 0
    t_all = time.perf_counter()
    c_all = time.process_time()
    for i in range(args.start, args.start + args.count):
        stem = os.path.join(args.out, f"{i:07d}")
        if os.path.exists(stem + ".json"):
            continue
        t0, c0 = time.perf_counter(), time.process_time()
        img, out, lab, scene, cam = render_one(args.seed, i, W, H)
        q = lab["post"]["jpeg"]
        with open(stem + ".jpg", "wb") as f:
            f.write(post.jpeg_bytes(img, q))
        cv2.imwrite(stem + "_hand.png", out["mask"])
        lab["image"] = os.path.basename(stem) + ".jpg"
        lab["mask"] = os.path.basename(stem) + "_hand.png"
        tmp = stem + ".json.tmp"
        with open(tmp, "w") as f:
            json.dump(lab, f, default=_jsonable, separators=(",", ":"))
        os.replace(tmp, stem + ".json")
        done += 1
        dt, dc = time.perf_counter() - t0, time.process_time() - c0
        print(f"frame {i}: {dt:.2f} s wall, {dc:.2f} CPU-s, {len(lab['hands'])} hands, "
              f"{sum(lab['contact'])} contacts, {lab['position_kind']}", flush=True)
    if done:
        print(f"{done} frames, {(time.perf_counter() - t_all) / done:.2f} s wall/frame, "
              f"{(time.process_time() - c_all) / done:.2f} CPU-s/frame (this process)")
    else:
        print("nothing to do: all frames exist")


if __name__ == "__main__":
    main()
