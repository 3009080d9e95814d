"""Degraded copies of a labelled clip, to measure how the pipeline holds up on footage unlike the
one real clip we have: other encoders and JPEG qualities, a camera's gain drifting, a soft focus,
a dim room, sensor noise, a colour cast, a lower resolution, a board inside a wider picture,
turned a quarter (White on the right, as the Chess-Testmedia clips are filmed) or a half.

    .venv/bin/python -m real.degrade --labels real/overhead-game-clip/labels.json --out /tmp/degraded
    touchmove eval /tmp/degraded            # one row per copy, and the totals

Each copy is a folder with `clip.avi` (or `.mp4`) and a `labels.json`: the source's labels with
the video and the playing area's corners changed to match. The shared overhead clip is GPL-3.0:
write the copies outside the repository.
"""

import argparse
import json
import os

import cv2
import numpy as np


def read_frames(path):
    cap = cv2.VideoCapture(path)
    frames = []
    while True:
        ok, frame = cap.read()
        if not ok:
            break
        frames.append(frame)
    if not frames:
        raise SystemExit(f"{path}: no frames could be read")
    return frames, cap.get(cv2.CAP_PROP_FPS) or 24.0


def gain(i, frame, fps):
    """An automatic gain and brightness wandering over a few seconds."""
    s = i / fps
    return cv2.convertScaleAbs(frame, alpha=1.0 + 0.2 * np.sin(2.0 * s), beta=10.0 * np.cos(1.3 * s))


def noise(i, frame, fps):
    """Sensor noise of a dim webcam (sigma 6 grey levels), new in every frame."""
    rng = np.random.default_rng(i)
    return (frame + rng.normal(0, 6, frame.shape)).clip(0, 255).astype(np.uint8)


def warm(i, frame, fps):
    """A tungsten cast: red up, blue down."""
    return cv2.convertScaleAbs(frame * np.array([0.8, 1.0, 1.15]))


def place(frame, corners, scale, canvas=None, quarter_turns=0, seed=0):
    """`frame` shrunk by `scale`, turned counter-clockwise by `quarter_turns`, in the middle of
    a `canvas` (width, height) of a noisy table colour; returns the image and the corners."""
    h, w = frame.shape[:2]
    pts = np.array(corners, float)
    for _ in range(quarter_turns % 4):
        frame = np.ascontiguousarray(np.rot90(frame))
        pts = np.stack([pts[:, 1], w - pts[:, 0]], 1)
        h, w = w, h
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    small = cv2.resize(frame, size, interpolation=cv2.INTER_AREA)
    pts = pts * [size[0] / w, size[1] / h]
    if canvas is None:
        return small, pts
    cw, ch = canvas
    rng = np.random.default_rng(seed)
    table = np.full((ch, cw, 3), (70, 90, 110), float) + rng.normal(0, 8, (ch, cw, 3))
    image = cv2.GaussianBlur(table.clip(0, 255).astype(np.uint8), (5, 5), 0)
    ox, oy = (cw - size[0]) // 2, (ch - size[1]) // 2
    image[oy:oy + size[1], ox:ox + size[0]] = small
    return image, pts + [ox, oy]


# name: (per-frame transform (index, frame, fps) -> frame, fourcc, extension, JPEG quality,
#        scale, canvas, quarter turns)
COPIES = {
    "mjpeg": (None, "MJPG", "avi", None, 1.0, None, 0),
    "mjpeg-q70": (None, "MJPG", "avi", 70, 1.0, None, 0),
    "mpeg4": (None, "mp4v", "mp4", None, 1.0, None, 0),
    "gain": (gain, "MJPG", "avi", None, 1.0, None, 0),
    "blur": (lambda i, f, fps: cv2.GaussianBlur(f, (0, 0), 1.2), "MJPG", "avi", None, 1.0, None, 0),
    "dim": (lambda i, f, fps: cv2.convertScaleAbs(f, alpha=0.7), "MJPG", "avi", None, 1.0, None, 0),
    "half": (None, "MJPG", "avi", None, 1 / 2, None, 0),
    "third": (None, "MJPG", "avi", None, 1 / 3, None, 0),
    "third-turned": (None, "MJPG", "avi", None, 1 / 3, (320, 240), 1),
    "quarter-framed": (None, "MJPG", "avi", None, 1 / 4, (320, 240), 0),
    # Not looked at while the tracker's rules of session 10 were written: a check of them.
    "noise": (noise, "MJPG", "avi", None, 1.0, None, 0),
    "warm": (warm, "MJPG", "avi", None, 1.0, None, 0),
    "two-thirds-framed": (None, "MJPG", "avi", None, 2 / 3, (640, 480), 0),
    "half-turned-back": (None, "MJPG", "avi", None, 1 / 2, (480, 360), 2),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--labels", required=True, help="a clip's labels.json (its `video` relative to it)")
    ap.add_argument("--out", required=True, help="folder for the copies (outside the repository)")
    ap.add_argument("--only", nargs="*", choices=sorted(COPIES), help="make only these copies")
    args = ap.parse_args()
    labels = json.load(open(args.labels))
    video = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(args.labels)), labels["video"]))
    frames, fps = read_frames(video)
    for name in args.only or COPIES:
        transform, fourcc, ext, quality, scale, canvas, turns = COPIES[name]
        folder = os.path.join(args.out, name)
        os.makedirs(folder, exist_ok=True)
        writer = None
        for i, frame in enumerate(frames):
            if transform is not None:
                frame = transform(i, frame, fps)
            image, corners = place(frame, labels["corners"], scale, canvas, turns)
            if writer is None:
                writer = cv2.VideoWriter(os.path.join(folder, f"clip.{ext}"), cv2.VideoWriter_fourcc(*fourcc), fps, image.shape[1::-1])
                if quality is not None:
                    writer.set(cv2.VIDEOWRITER_PROP_QUALITY, quality)
            writer.write(image)
        writer.release()
        copy = dict(labels, video=f"clip.{ext}", corners=np.round(corners, 2).tolist())
        with open(os.path.join(folder, "labels.json"), "w") as f:
            json.dump(copy, f, indent=1)
        print(f"{name}: {len(frames)} frames, {image.shape[1]}x{image.shape[0]}", flush=True)


if __name__ == "__main__":
    main()
