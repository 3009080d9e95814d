"""Fits the touch probability of a hand's visit to a piece (src/track/displace.rs,
`touch_probability`) on rendered clips whose labels say which pieces were touched.

    python fit_touch.py FIXTURES EVAL_OUT [FIXTURES EVAL_OUT ...] [--check FIXTURES EVAL_OUT]

FIXTURES is a folder of labelled clips (NAME/labels.json), EVAL_OUT the folder `touchmove eval
FIXTURES --out EVAL_OUT` wrote (NAME/visits.jsonl). Every visit measured is one example: touched
when a labelled touch of its square falls within it (from 0.6 s before the hand was first near,
the pre-shape, to the view after). The model is logistic in ln z and ln shift_z (how far the view
changed and the piece shifted, over the camera's noise floor); it is fitted by Newton's method
with a weak Gaussian prior on the weights. Prints the coefficients to put in displace.rs, and
for the fitted and any --check sets, a reliability table (predicted against observed).
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
    xs, ys = [], []
    for name in sorted(os.listdir(fixtures)):
        labels = os.path.join(fixtures, name, "labels.json")
        visits = os.path.join(out, name, "visits.jsonl")
        if not (os.path.exists(labels) and os.path.exists(visits)):
            continue
        touches = [e for e in json.load(open(labels))["events"] if e["ev"] == "touch"]
        for line in open(visits):
            v = json.loads(line)
            hit = any(e["sq"] == v["sq"] and v["from"] - PRE_S <= e["t"] <= v["to"] for e in touches)
            xs.append([1.0, math.log(max(v["z"], 1e-3)), math.log(max(v["shift_z"], 1e-3))])
            ys.append(1.0 if hit else 0.0)
    return np.array(xs).reshape(-1, 3), np.array(ys)


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
    if y.sum() == 0 or y.sum() == len(y):
        raise SystemExit("error: the visits are all touched or all not: nothing to fit")
    w = fit(x, y)
    print(f"A = {w[0]:.3f}, B = {w[1]:.3f}, C = {w[2]:.3f}  (p = 1 / (1 + exp(-(A + B ln z + C ln shift_z))))")
    reliability("fitted on " + " ".join(a.sets[::2]), x, y, w)
    for fixtures, out in a.check:
        cx, cy = examples(fixtures, out)
        reliability("checked on " + fixtures, cx, cy, w)


if __name__ == "__main__":
    main()
