"""Copies of rendered games (`render.game`: a photo of the start and one after each ply) with
photos missing, as from a photographer who does not catch every move or a stream that drops out:
after each photo kept, with probability --rate, the next one, two or three photos are not taken
(the last photo always is). Each copy keeps the photos renumbered from 0000.jpg and a
`labels.json` in the game's format re-timed to them: a ply hidden in a gap is made in the window
between the photos on either side of the gap.

    .venv/bin/python -m render.gaps --games ../fixtures/games --out /tmp/gaps
    touchmove eval /tmp/gaps

The photos dropped are drawn from a generator seeded by the game's name and --seed, so a copy
is the same every time. The copies are generated: write them outside the repository.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil

GAME = "touchmove-clip-labels/partial-1"


def kept_photos(n: int, rate: float, rng: random.Random) -> list[int]:
    """Which of `n` photos are kept: the first and the last always; after any photo, with
    probability `rate`, the next one to three are dropped."""
    keep = [0]
    while keep[-1] < n - 1:
        k = keep[-1] + 1
        if rng.random() < rate:
            k += rng.choice([1, 2, 3])
        keep.append(min(k, n - 1))
    return keep


def copy_game(src: str, dst: str, rate: float, seed: int) -> tuple[int, int]:
    """Writes the copy of the game in folder `src` to folder `dst`; the photos before and after."""
    with open(os.path.join(src, "labels.json")) as f:
        labels = json.load(f)
    if labels.get("format") != GAME or labels.get("fps") != 1:
        raise SystemExit(f"{src}: not a game of render.game (one photo a second)")
    photos = sorted(p for p in os.listdir(src) if p[:4].isdigit() and p.endswith(".jpg"))
    keep = kept_photos(len(photos), rate, random.Random(f"{os.path.basename(os.path.normpath(src))}/{seed}"))
    os.makedirs(dst, exist_ok=True)
    for i, k in enumerate(keep):
        shutil.copyfile(os.path.join(src, photos[k]), os.path.join(dst, f"{i:04d}.jpg"))
    # Ply p is made between photos p - 1 and p: in the copy, between the last photo kept before
    # it and the first kept at or after it.
    before = lambda k: max(i for i, kk in enumerate(keep) if kk < k)
    after = lambda k: min(i for i, kk in enumerate(keep) if kk >= k)
    moves = [dict(m, **{"from": before(m["to"]), "to": after(m["to"])}) for m in labels["moves"]]
    rulings = [dict(r, **{"from": before(r["to"]), "to": after(r["to"])}) for r in labels.get("rulings", [])]
    frames = [dict(f, frame=keep.index(f["frame"])) for f in labels["frames"] if f["frame"] in keep]
    copy = dict(labels, duration=len(keep), moves=moves, rulings=rulings, frames=frames,
                note=labels.get("note", "") + f" Photos kept: {keep} (render.gaps, rate {rate}, seed {seed}).")
    with open(os.path.join(dst, "labels.json"), "w") as f:
        json.dump(copy, f, separators=(",", ":"))
    return len(photos), len(keep)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", required=True, help="a folder of rendered games (each a folder with labels.json)")
    ap.add_argument("--out", required=True, help="folder for the copies (outside the repository)")
    ap.add_argument("--rate", type=float, default=0.12, help="chance of a gap after each photo (default 0.12)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    names = sorted(n for n in os.listdir(args.games) if os.path.isfile(os.path.join(args.games, n, "labels.json")))
    if not names:
        raise SystemExit(f"{args.games}: no labelled games")
    for name in names:
        n, m = copy_game(os.path.join(args.games, name), os.path.join(args.out, name), args.rate, args.seed)
        print(f"{name}: {m} of {n} photos kept", flush=True)


if __name__ == "__main__":
    main()
