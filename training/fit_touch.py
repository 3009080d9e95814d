"""Fits the touch probability of a hand's visit to a piece (src/track/displace.rs,
`touch_probability`) on rendered clips whose labels say which pieces were touched.

    python fit_touch.py FIXTURES EVAL_OUT [FIXTURES EVAL_OUT ...] [--check FIXTURES EVAL_OUT]

FIXTURES is a folder of labelled clips (NAME/labels.json), EVAL_OUT the folder `touchmove eval
FIXTURES --out EVAL_OUT` wrote (NAME/visits.jsonl). Every visit measured is one example: touched
when a labelled touch of its square falls within it (from 0.6 s before the hand was first near,
the pre-shape, to the view after). The model is logistic in what the touch did to the piece, ln z
and ln shift_z (how far the view changed and the piece shifted, over the camera's noise floor),
and in what the board model read meanwhile: the greatest contact, the seconds contact was held
and the greatest cover. It is fitted by Newton's method with a weak Gaussian prior on the
weights. Prints the coefficients to put in displace.rs, the approach (the median time from the
hand first near the piece to the labelled touch, `APPROACH_S`), and for the fitted and any
--check sets, a reliability table (predicted against observed) and the touches found at 0.5.
"""
from __future__ import annotations

import argparse
import json
import math
import os

import numpy as np

PRE_S = 0.6  # a touch is labelled at the contact; the hand is near a little before
PRIOR = 1.0  # the weights' prior standard deviation (in units of ln z)


def examples(fixtures: str, out: str):
    """(features, touched) of every visit of every clip of `fixtures`."""
    xs, ys, approach = [], [], []
    for name in sorted(os.listdir(fixtures)):
        labels = os.path.join(fixtures, name, "labels.json")
        visits = os.path.join(out, name, "visits.jsonl")
        if not (os.path.exists(labels) and os.path.exists(visits)):
            continue
        touches = [e for e in json.load(open(labels))["events"] if e["ev"] == "touch"]
        for line in open(visits):
            v = json.loads(line)
            hits = [e for e in touches if e["sq"] == v["sq"] and v["from"] - PRE_S <= e["t"] <= v["to"]]
            xs.append(features(v))
            ys.append(1.0 if hits else 0.0)
            approach += [e["t"] - v["from"] for e in hits]
    return np.array(xs).reshape(-1, len(NAMES) + 1), np.array(ys), approach


NAMES = ["ln z", "ln shift_z", "contact_max", "contact_held_s", "cover_max", "ln stay"]


def features(v):
    """A visit's features, as displace.rs's `touch_probability` takes them (1 first)."""
    return [1.0, math.log(max(v["z"], 1e-3)), math.log(max(v["shift_z"], 1e-3)),
            v["contact_max"], min(v["contact_held_s"], HELD_MAX), v["cover_max"],
            math.log(v["to"] - v["from"] + STAY_MIN)]


STAY_MIN = 0.05  # seconds added to a visit's stay before its log (a frame at 20 fps)


HELD_MAX = 2.0  # seconds of contact counted at most (a hand resting by a piece for minutes)


def fit(x, y):
    w = np.zeros(x.shape[1])
    prior = np.array([0.0] + [1.0 / PRIOR**2] * (x.shape[1] - 1))
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-x @ w))
        grad = x.T @ (p - y) + prior * w
        hess = (x * (p * (1 - p))[:, None]).T @ x + np.diag(prior) + 1e-9 * np.eye(x.shape[1])
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def reliability(name, x, y, w):
    p = 1.0 / (1.0 + np.exp(-x @ w))
    print(f"\n{name}: {len(y)} visits, {int(y.sum())} touched; log loss {-np.mean(y * np.log(p + 1e-12) + (1 - y) * np.log(1 - p + 1e-12)):.3f}")
    print("| predicted | visits | touched | observed |\n|---|---:|---:|---:|")
    for lo, hi in [(0, 0.1), (0.1, 0.3), (0.3, 0.5), (0.5, 0.7), (0.7, 0.9), (0.9, 1.01)]:
        m = (p >= lo) & (p < hi)
        obs = f"{y[m].mean():.2f}" if m.any() else "-"
        print(f"| {lo:.1f}-{min(hi, 1):.1f} | {int(m.sum())} | {int(y[m].sum())} | {obs} |")
    found, said = int(((p >= 0.5) & (y == 1)).sum()), int((p >= 0.5).sum())
    print(f"at p >= 0.5: {found} of {int(y.sum())} touched visits found, {found} of {said} said touched")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sets", nargs="+", help="FIXTURES EVAL_OUT pairs to fit on")
    ap.add_argument("--check", nargs=2, action="append", default=[], metavar=("FIXTURES", "EVAL_OUT"),
                    help="a set reported with the fitted model, not fitted on")
    a = ap.parse_args()
    if len(a.sets) % 2:
        ap.error("give FIXTURES EVAL_OUT pairs")
    parts = [examples(a.sets[i], a.sets[i + 1]) for i in range(0, len(a.sets), 2)]
    x, y = np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
    approach = [d for p in parts for d in p[2]]
    if y.sum() == 0 or y.sum() == len(y):
        raise SystemExit("error: the visits are all touched or all not: nothing to fit")
    w = fit(x, y)
    print("p = 1 / (1 + exp(-(w . [1, " + ", ".join(NAMES) + "])))")
    print("W = [" + ", ".join(f"{v:.3f}" for v in w) + "]")
    q = np.percentile(approach, [10, 50, 90])
    print(f"APPROACH_S = {q[1]:.2f} (10th to 90th percentile {q[0]:.2f} to {q[2]:.2f} s, {len(approach)} touches)")
    reliability("fitted on " + " ".join(a.sets[::2]), x, y, w)
    for fixtures, out in a.check:
        cx, cy, _ = examples(fixtures, out)
        reliability("checked on " + fixtures, cx, cy, w)


if __name__ == "__main__":
    main()
