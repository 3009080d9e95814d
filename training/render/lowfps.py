"""Low frame rate copies of labelled clips: every k-th frame of each clip, as a video at the lower
rate, with its labels re-timed, to measure the pipeline on a camera that sees a frame or two a
second.

    .venv/bin/python -m render.lowfps --clips ../fixtures/clips --fps 1 --out /tmp/lowfps1
    touchmove eval /tmp/lowfps1

The clip's rate must be a whole multiple of --fps (20 fps clips: 1, 2, 4, 5, 10). Each copy is a
folder with `clip.mp4` (H.264, near lossless) and `labels.json` in the clip's format: the same
events, moves and rulings at the same times; frame indices at the new rate (an event's is
round(t * fps)); per-frame labels only for the frames kept. The copies are generated: write them
outside the repository.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess

from real.degrade import read_frames

RENDERED = "touchmove-clip-labels/1"


def lower(src: str, dst: str, fps: int):
    """Writes the copy of the clip in folder `src` at `fps` frames a second to folder `dst`."""
    with open(os.path.join(src, "labels.json")) as f:
        labels = json.load(f)
    rendered = labels["format"] == RENDERED
    video = os.path.join(src, "clip.mp4" if rendered else labels.get("video", "clip.mp4"))
    frames, rate = read_frames(os.path.normpath(video))
    k = round(rate / fps)
    if abs(rate / fps - k) > 1e-6:
        raise SystemExit(f"{video}: {rate} fps is not a whole multiple of {fps}")
    kept = frames[::k]
    os.makedirs(dst, exist_ok=True)
    h, w = kept[0].shape[:2]
    ff = subprocess.Popen(["ffmpeg", "-y", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt", "bgr24", "-s", f"{w}x{h}",
                           "-r", str(fps), "-i", "-", "-c:v", "libx264", "-crf", "12", "-pix_fmt", "yuv420p",
                           os.path.join(dst, "clip.mp4")], stdin=subprocess.PIPE)
    for frame in kept:
        ff.stdin.write(frame.tobytes())
    ff.stdin.close()
    if ff.wait():
        raise SystemExit(f"{dst}: ffmpeg failed")
    copy = dict(labels, fps=fps)
    if "frames" in labels:
        copy["frames"] = [dict(r, frame=r["frame"] // k) for r in labels["frames"] if r["frame"] % k == 0]
    if "events" in labels:
        copy["events"] = [dict(e, frame=round(e["t"] * fps)) for e in labels["events"]]
    if "unscripted_contacts" in labels:
        copy["unscripted_contacts"] = [dict(c, frame=c["frame"] // k) for c in labels["unscripted_contacts"] if c["frame"] % k == 0]
    if rendered:
        copy["n_frames"] = len(kept)
    else:
        copy["video"] = "clip.mp4"
    with open(os.path.join(dst, "labels.json"), "w") as f:
        json.dump(copy, f, separators=(",", ":"))
    return len(frames), len(kept)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clips", required=True, help="a folder of labelled clips (each a folder with labels.json)")
    ap.add_argument("--fps", type=int, required=True, help="the copies' frame rate")
    ap.add_argument("--out", required=True, help="folder for the copies (outside the repository)")
    args = ap.parse_args(argv)
    names = sorted(n for n in os.listdir(args.clips) if os.path.isfile(os.path.join(args.clips, n, "labels.json")))
    if not names:
        raise SystemExit(f"{args.clips}: no labelled clips")
    for name in names:
        n, m = lower(os.path.join(args.clips, name), os.path.join(args.out, name), args.fps)
        print(f"{name}: {n} frames -> {m} at {args.fps} fps", flush=True)


if __name__ == "__main__":
    main()
