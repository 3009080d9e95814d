"""Builds the training cache: every labelled image warped to the canonical board, with its
per-square and hand-map targets.

    python -m board_model.cache --frames DIR [DIR...] --real ../../shared/data --out cache

Synthetic frames (from `render.frames`) give every target; real photos give the pieces (and,
having no hands in them, zero hand targets). Real images are split deterministically into
train and held-out by `split_of`; the held-out ones are never trained on, and are listed in
`real/held-out.json` for `touchmove eval-photos --held-out`.

Output: `OUT/img/NNNNNN.jpg` (432 x 432 warps) and `OUT/labels.npz` with, per image:
`classes` [64] int8 (FEN reading order, 0 empty, 1-6 PNBRQK, 7-12 pnbrqk), `cover` [64] float16,
`contact` [64] bool, `hands` [2, 54, 54] uint8 (fraction of each cell covered by White's and
Black's hands and arms, x255), `set` (source set name), `split` ("train", "val" or "test").
"""

import argparse
import hashlib
import json
import os
from multiprocessing import Pool
from pathlib import Path

import cv2
import numpy as np

from .geometry import CELL, CELLS, SIZE, rotate_corners, warp

LETTERS = ".PNBRQKpnbrqk"


def label_classes(pieces):
    """64 class indices from a render label's `pieces` (64 FEN letters or `.`, FEN reading order)."""
    return np.int8([LETTERS.index(p) for p in pieces])


def fen_classes(fen_board):
    """64 class indices in FEN reading order from the board part of a FEN."""
    out = []
    for ch in fen_board.split()[0]:
        if ch == "/":
            continue
        if ch.isdigit():
            out += [0] * int(ch)
        else:
            out.append(LETTERS.index(ch))
    assert len(out) == 64, fen_board
    return np.int8(out)


def split_of(set_name, image_name):
    """Held-out ("test") for about a third of each real set, chosen by a hash of the name so
    the choice does not depend on file order; the rest "train"."""
    digest = hashlib.sha256(f"{set_name}/{image_name}".encode()).digest()
    return "test" if digest[0] % 3 == 0 else "train"


def prescale(image, corners, target=8 * 48):
    """Shrinks a large photo (area-averaging) until the playing area is at most 1.5x its size in
    the warp, so the bilinear warp does not alias; returns the image and scaled corners."""
    c = np.float64(corners)
    side = np.mean([np.linalg.norm(c[i] - c[(i + 1) % 4]) for i in range(4)])
    scale = min(1.0, 1.5 * target / side)
    if scale < 1.0:
        image = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        c = c * scale
    return image, c


def hand_targets(mask_warped, hands):
    """Per-owner cell fractions [2, 54, 54] from a warped hand mask (value k, 64+k, 128+k for
    hand k's hand, arm and sleeve)."""
    owner_of = {h["value"]: (0 if h["owner"] == "w" else 1) for h in hands}
    out = np.zeros((2, SIZE, SIZE), np.float32)
    k = mask_warped % 64
    for value, owner in owner_of.items():
        out[owner] += (mask_warped > 0) & (k == value)
    out = np.minimum(out, 1.0).reshape(2, CELLS, CELL, CELLS, CELL).mean(axis=(2, 4))
    return np.uint8(np.round(out * 255))


def synthetic(args):
    json_path, out_dir, index = args
    label = json.loads(Path(json_path).read_text())
    image = cv2.imread(str(Path(json_path).with_suffix(".jpg")))
    mask = cv2.imread(str(Path(json_path).with_name(label["mask"])), cv2.IMREAD_UNCHANGED)
    corners = label["corners"]
    board = warp(image, corners, cv2.INTER_LINEAR)
    mask_w = warp(mask, corners, cv2.INTER_NEAREST, fade=False)
    cv2.imwrite(str(Path(out_dir) / "img" / f"{index:06d}.jpg"), board, [cv2.IMWRITE_JPEG_QUALITY, 80])
    classes = label_classes(label["pieces"])
    return dict(
        classes=classes,
        cover=np.float16(label["hand_cover"]),
        contact=np.bool_(label["contact"]),
        hands=hand_targets(mask_w, label["hands"]),
        set="synthetic",
        split="val" if int(label["index"]) % 10 == 9 else "train",
        name=str(json_path),
    )


def real_items(root):
    """(set, image path, corners a8,h8,h1,a1, FEN board) for each labelled real photo."""
    root = Path(root)
    items = []
    orient = json.loads((Path(__file__).parent.parent / "real/orientation.json").read_text())
    for label in json.loads((root / "afka2d-overhead-photos/labels.json").read_text()):
        corners = rotate_corners(label["corners"], orient["afka2d-overhead-photos"].get(label["image"], 0))
        items.append(("afka2d", root / "afka2d-overhead-photos" / label["image"], corners, label["fen"]))
    for label in json.loads((root / "webcam-boards/labels.json").read_text()):
        if "image" not in label:
            continue  # the clip's entry
        turns = orient["webcam-boards"].get(label["image"], 0)
        corners = rotate_corners(label["warp_points"], turns)
        items.append(("webcam", root / "webcam-boards" / label["image"], corners, label["fen_board"]))
    found = json.loads((Path(__file__).parent.parent / "real/phone-photos-fen.corners.json").read_text())
    for label in json.loads((root / "phone-photos-fen/labels.json").read_text()):
        entry = found[label["image"]]
        corners = rotate_corners(entry["image_order"], entry["quarter_turns"])
        items.append(("phone", root / "phone-photos-fen" / label["image"], corners, label["fen_board"]))
    return items


def real(args):
    (set_name, path, corners, fen), out_dir, index = args
    image = cv2.imread(str(path))
    image, corners = prescale(image, corners)
    board = warp(image, corners, cv2.INTER_LINEAR)
    cv2.imwrite(str(Path(out_dir) / "img" / f"{index:06d}.jpg"), board, [cv2.IMWRITE_JPEG_QUALITY, 80])
    return dict(
        classes=fen_classes(fen),
        cover=np.zeros(64, np.float16),
        contact=np.zeros(64, np.bool_),
        hands=np.zeros((2, CELLS, CELLS), np.uint8),
        set=set_name,
        split=split_of(set_name, path.name),
        name=str(path),
    )


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--frames", nargs="*", default=[], help="folders of rendered frames (NNNNNNN.json/.jpg/_hand.png)")
    p.add_argument("--real", help="../shared/data (the real labelled photos)")
    p.add_argument("--out", required=True)
    p.add_argument("--limit", type=int, default=0, help="at most this many synthetic frames")
    p.add_argument("--jobs", type=int, default=os.cpu_count())
    a = p.parse_args()
    out = Path(a.out)
    (out / "img").mkdir(parents=True, exist_ok=True)
    jsons = sorted(j for d in a.frames for j in Path(d).glob("[0-9]*.json"))
    jsons = [j for j in jsons if j.with_suffix(".jpg").exists() and j.with_name(j.stem + "_hand.png").exists()]
    if a.limit:
        jsons = jsons[: a.limit]
    jobs = [(str(j), str(out), i) for i, j in enumerate(jsons)]
    reals = real_items(a.real) if a.real else []
    real_jobs = [(item, str(out), len(jobs) + i) for i, item in enumerate(reals)]
    with Pool(a.jobs) as pool:
        rows = pool.map(synthetic, jobs, chunksize=16) + pool.map(real, real_jobs)
    np.savez_compressed(
        out / "labels.npz",
        classes=np.stack([r["classes"] for r in rows]),
        cover=np.stack([r["cover"] for r in rows]),
        contact=np.stack([r["contact"] for r in rows]),
        hands=np.stack([r["hands"] for r in rows]),
        set=np.array([r["set"] for r in rows]),
        split=np.array([r["split"] for r in rows]),
        name=np.array([r["name"] for r in rows]),
    )
    held_out = {}
    for r in rows:
        if r["split"] == "test":
            path = Path(r["name"])
            held_out.setdefault(path.parent.name, []).append(path.name)
    (Path(__file__).parent.parent / "real/held-out.json").write_text(json.dumps({k: sorted(v) for k, v in sorted(held_out.items())}, indent=1) + "\n")
    sets = {}
    for r in rows:
        sets.setdefault((r["set"], r["split"]), 0)
        sets[(r["set"], r["split"])] += 1
    for (s, sp), n in sorted(sets.items()):
        print(f"{s:10s} {sp:5s} {n}")


if __name__ == "__main__":
    main()
