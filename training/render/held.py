"""Video copies of photo-a-move games (`render.game`, `render.gaps`): each photo held for
--hold seconds at --fps frames a second, as a camera pointed at a board between moves films it,
or as photos are turned into a video to be read. With --noise, each frame gets fresh sensor
noise, so the frames of one photo are not identical (a real camera's are not) and the gate
reads them all. The labels are re-timed: ply k, made between photos k - 1 and k, is made in the
window between the times those photos are first shown, and so are the rulings.

    .venv/bin/python -m render.held --games ../fixtures/games --out /tmp/held
    touchmove eval /tmp/held

The copies are generated: write them outside the repository.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess

import cv2
import numpy as np

GAME = "touchmove-clip-labels/partial-1"


def hold(src: str, dst: str, seconds: float, fps: int, noise: float, seed: int, scale: float = 1.0, blur: float = 0.0,
         gain: float = 1.0, jitter: float = 0.0) -> int:
    """Writes the video copy of the game in folder `src` to folder `dst`; its frame count. The copy
    may be shrunk by `scale`, blurred (Gaussian sigma `blur` px), darkened (`gain`), and its
    labelled corners moved at random by up to `jitter` of the board's diagonal (corners given a
    few pixels off, as a person marks them)."""
    with open(os.path.join(src, "labels.json")) as f:
        labels = json.load(f)
    if labels.get("format") != GAME or labels.get("fps") != 1:
        raise SystemExit(f"{src}: not a game of render.game (one photo a second)")
    photos = sorted(p for p in os.listdir(src) if p[:4].isdigit() and p.endswith(".jpg"))
    per = max(1, round(seconds * fps))
    first = cv2.imread(os.path.join(src, photos[0]))
    h, w = (round(v * scale) for v in first.shape[:2])
    os.makedirs(dst, exist_ok=True)
    ff = subprocess.Popen(["ffmpeg", "-y", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt", "bgr24", "-s", f"{w}x{h}",
                           "-r", str(fps), "-i", "-", "-c:v", "libx264", "-crf", "18", "-pix_fmt", "yuv420p",
                           os.path.join(dst, "clip.mp4")], stdin=subprocess.PIPE)
    rng = np.random.default_rng(seed)
    for p in photos:
        img = cv2.imread(os.path.join(src, p))
        if scale != 1.0:
            img = cv2.resize(img, (w, h), interpolation=cv2.INTER_AREA)
        if blur > 0:
            img = cv2.GaussianBlur(img, (0, 0), blur)
        img = img.astype(np.float32) * gain
        for _ in range(per):
            frame = img + rng.normal(0.0, noise, img.shape) if noise > 0 else img
            ff.stdin.write(np.clip(frame, 0, 255).astype(np.uint8).tobytes())
    ff.stdin.close()
    if ff.wait():
        raise SystemExit(f"{dst}: ffmpeg failed")
    # Windows are in seconds: photo k (shown at k s) is shown from k * held s on.
    held = per / fps
    moves = [dict(m, **{"from": m["from"] * held, "to": m["to"] * held}) for m in labels["moves"]]
    rulings = [dict(r, **{"from": r["from"] * held, "to": r["to"] * held}) for r in labels.get("rulings", [])]
    frames = [dict(f, frame=f["frame"] * per + k) for f in labels["frames"] for k in range(0, per, max(1, per // 4))]
    corners = np.array(labels["corners"], dtype=np.float64) * scale
    diagonal = np.linalg.norm(corners[2] - corners[0])
    corners += rng.uniform(-1.0, 1.0, corners.shape) * jitter * diagonal / np.sqrt(2.0)
    copy = dict(labels, video="clip.mp4", corners=[[round(x, 2), round(y, 2)] for x, y in corners], rulings=rulings, fps=fps, duration=len(photos) * per / fps, moves=moves, frames=frames,
                note=labels.get("note", "") + f" Each photo held {per / fps:g} s at {fps} fps, noise {noise:g} (render.held).")
    with open(os.path.join(dst, "labels.json"), "w") as f:
        json.dump(copy, f, separators=(",", ":"))
    return len(photos) * per


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", required=True, help="a folder of games (one sub-folder each)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--hold", type=float, default=2.0, help="seconds each photo is held (default 2)")
    ap.add_argument("--fps", type=int, default=10, help="frames a second of the copy (default 10)")
    ap.add_argument("--noise", type=float, default=2.0, help="sensor noise, grey levels (default 2)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--scale", type=float, default=1.0, help="size of the copy (default 1)")
    ap.add_argument("--blur", type=float, default=0.0, help="Gaussian blur, sigma in px (default 0)")
    ap.add_argument("--gain", type=float, default=1.0, help="brightness factor (default 1)")
    ap.add_argument("--jitter", type=float, default=0.0,
                    help="labelled corners moved at random by up to this share of the diagonal (default 0)")
    args = ap.parse_args()
    games = sorted(g for g in os.listdir(args.games) if os.path.isfile(os.path.join(args.games, g, "labels.json")))
    for i, g in enumerate(games):
        n = hold(os.path.join(args.games, g), os.path.join(args.out, g), args.hold, args.fps, args.noise, args.seed + i,
                 args.scale, args.blur, args.gain, args.jitter)
        print(f"{g}: {n} frames")


if __name__ == "__main__":
    main()
