"""Fill (or refresh) the `rules` field of rendered clips from the lead's rule engine.

    python -m render.fill_rulings DIR [DIR ...]

Each DIR is a clip folder (labels.json + events.jsonl) or a folder of clip folders. Runs
`touchmove rules --fen FEN --clock --declarations events.jsonl` (target/*/touchmove, or
$TOUCHMOVE_BIN, or touchmove on PATH) and stores its parsed JSON Lines in labels.json.
"""
from __future__ import annotations

import json
import os
import sys

from .clip import find_touchmove, run_rules


def clip_dirs(paths):
    for p in paths:
        if os.path.exists(os.path.join(p, "labels.json")):
            yield p
        else:
            for d in sorted(os.listdir(p)):
                q = os.path.join(p, d)
                if os.path.exists(os.path.join(q, "labels.json")):
                    yield q


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        print(__doc__)
        return 2
    if find_touchmove() is None:
        print("touchmove binary not found: cargo build --release first", file=sys.stderr)
        return 1
    for d in clip_dirs(argv):
        path = os.path.join(d, "labels.json")
        labels = json.load(open(path))
        cmd, rules, err = run_rules(labels["fen"], os.path.join(d, "events.jsonl"))
        labels["rules_cmd"] = " ".join(cmd)
        labels["rules"] = rules
        labels.pop("rules_error", None)
        if err:
            labels["rules_error"] = err
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(labels, f, separators=(",", ":"))
        os.replace(tmp, path)
        kinds = [r.get("kind") + (":" + r.get("article", "") if r.get("kind") == "ruling" else "") for r in rules or []]
        print(f"{os.path.basename(d)}: {', '.join(kinds) or 'nothing'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
