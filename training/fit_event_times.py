"""Fits when the tracker dates a lift (src/track/squares.rs, `LIFT_LEAD_S`) on rendered clips
whose labels say when each piece left its square.

    python fit_event_times.py FIXTURES EVAL_OUT [FIXTURES EVAL_OUT ...] [--check FIXTURES EVAL_OUT]

FIXTURES is a folder of labelled clips (NAME/labels.json), EVAL_OUT the folder `touchmove eval
FIXTURES --out EVAL_OUT` wrote (NAME/events.jsonl). A lift is dated `LIFT_LEAD_S` before the last
reading of the hand's grasp on the piece; each labelled lift is paired with the predicted lift of
its square nearest in time (within a second), and the lead that would have dated them best is the
current one (read from squares.rs) plus the median of labelled minus predicted. Prints it, with
the spread, and for the fitted and any --check sets how many lifts and releases are dated within
the 5 frames `touchmove eval` allows.
"""
from __future__ import annotations

import argparse
import json
import os
import re

import numpy as np

PAIR_S = 1.0  # a predicted event further than this from a labelled one is not its reading
TOLERANCE_FRAMES = 5  # as `touchmove eval` matches events
SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "track", "squares.rs")


def current_lead() -> float:
    m = re.search(r"const LIFT_LEAD_S: f64 = ([0-9.]+);", open(SOURCE).read())
    if not m:
        raise SystemExit(f"{SOURCE}: no LIFT_LEAD_S")
    return float(m.group(1))


def residuals(fixtures: str, out: str, kind: str):
    """(labelled - predicted seconds, fps) of every labelled `kind` event paired with a reading."""
    rows = []
    for name in sorted(os.listdir(fixtures)):
        labels = os.path.join(fixtures, name, "labels.json")
        events = os.path.join(out, name, "events.jsonl")
        if not (os.path.exists(labels) and os.path.exists(events)):
            continue
        lab = json.load(open(labels))
        predicted = [json.loads(line) for line in open(events) if line.strip()]
        for e in lab["events"]:
            if e["ev"] != kind:
                continue
            times = [p["t"] for p in predicted if p["ev"] == kind and p.get("sq") == e["sq"]]
            if not times:
                continue
            t = min(times, key=lambda x: abs(x - e["t"]))
            if abs(t - e["t"]) <= PAIR_S:
                rows.append((e["t"] - t, lab["fps"]))
    return rows


def report(name: str, fixtures_outs, shift: float):
    for kind in ("lift", "release"):
        rows = [r for f, o in fixtures_outs for r in residuals(f, o, kind)]
        if not rows:
            continue
        d = np.array([r[0] for r in rows])
        fps = np.array([r[1] for r in rows])
        s = shift if kind == "lift" else 0.0
        within = int(np.sum(np.abs(d) * fps <= TOLERANCE_FRAMES + 0.5))
        after = int(np.sum(np.abs(d - s) * fps <= TOLERANCE_FRAMES + 0.5))
        line = f"{name}: {kind}s paired {len(d)}, median labelled - predicted {np.median(d):+.3f} s, within {TOLERANCE_FRAMES} frames {within}"
        print(line + (f", {after} with the fitted lead" if kind == "lift" else ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("pairs", nargs="+", help="FIXTURES EVAL_OUT, repeated")
    ap.add_argument("--check", nargs=2, action="append", default=[], metavar=("FIXTURES", "EVAL_OUT"))
    a = ap.parse_args()
    if len(a.pairs) % 2:
        ap.error("give FIXTURES EVAL_OUT in pairs")
    fitted = list(zip(a.pairs[::2], a.pairs[1::2]))
    d = np.array([r[0] for f, o in fitted for r in residuals(f, o, "lift")])
    if not len(d):
        raise SystemExit("no labelled lift was read within a second")
    shift = float(np.median(d))
    lead = current_lead()
    print(f"LIFT_LEAD_S = {lead - shift:.2f} (now {lead:.2f}; labelled - predicted 10th to 90th percentile "
          f"{np.percentile(d, 10):+.2f} to {np.percentile(d, 90):+.2f} s, {len(d)} lifts)")
    report("fitted", fitted, shift)
    for f, o in a.check:
        report(f"checked on {f}", [(f, o)], shift)


if __name__ == "__main__":
    main()
