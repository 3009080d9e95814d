"""Copies of games with photos missing keep their labels true: the photos kept renumbered, each
ply's window spanning the gap that hides it."""

import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from render import gaps  # noqa: E402


def test_the_first_and_last_photos_are_kept_and_gaps_are_one_to_three_photos():
    for seed in range(50):
        keep = gaps.kept_photos(40, 0.3, random.Random(seed))
        assert keep[0] == 0 and keep[-1] == 39
        assert all(1 <= b - a <= 4 for a, b in zip(keep, keep[1:]))


def test_a_copy_renumbers_the_photos_and_spans_each_hidden_ply(tmp_path):
    src = tmp_path / "games" / "g"
    src.mkdir(parents=True)
    n = 12
    for k in range(n):
        (src / f"{k:04d}.jpg").write_bytes(bytes([k]))
    labels = {"format": gaps.GAME, "fps": 1, "duration": n, "fen": "startpos",
              "moves": [{"uci": f"m{p}", "from": p - 1, "to": p} for p in range(1, n)],
              "frames": [{"frame": k, "pieces": str(k)} for k in range(n)],
              "rulings": [{"verdict": "illegal", "article": "7.5.1", "side": "w", "from": p - 1, "to": p} for p in (5, 9)]}
    (src / "labels.json").write_text(json.dumps(labels))
    gaps.main(["--games", str(tmp_path / "games"), "--out", str(tmp_path / "out"), "--rate", "0.5", "--seed", "3"])
    out = tmp_path / "out" / "g"
    copy = json.loads((out / "labels.json").read_text())
    kept = [int(f["pieces"]) for f in copy["frames"]]
    assert copy["duration"] == len(kept) < n
    assert [f["frame"] for f in copy["frames"]] == list(range(len(kept)))
    assert [(out / f"{i:04d}.jpg").read_bytes() for i in range(len(kept))] == [bytes([k]) for k in kept]
    for m in copy["moves"]:
        p = int(m["uci"][1:])
        # Made after the photo kept before it, seen on the first photo kept after it.
        assert kept[m["from"]] < p <= kept[m["to"]]
        assert m["to"] == m["from"] + 1
    # A ruling on a ply spans the same gap as the ply.
    spans = {int(m["uci"][1:]): (m["from"], m["to"]) for m in copy["moves"]}
    assert [(r["from"], r["to"]) for r in copy["rulings"]] == [spans[5], spans[9]]
