"""Degraded copies of a clip keep their labels true: the playing area's corners follow the
picture through the shrink, the turn and the frame around it."""

import json
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np

TRAINING = Path(__file__).resolve().parents[1]


def _clip(folder: Path):
    """A 96 x 96 clip of 5 frames cut to a board whose a8 corner is marked red, h1 blue."""
    writer = cv2.VideoWriter(str(folder / "game.avi"), cv2.VideoWriter_fourcc(*"MJPG"), 10, (96, 96))
    for _ in range(5):
        frame = np.full((96, 96, 3), 128, np.uint8)
        frame[:16, :16] = (0, 0, 255)
        frame[-16:, -16:] = (255, 0, 0)
        writer.write(frame)
    writer.release()
    labels = {"format": "touchmove-clip-labels/partial-1", "video": "game.avi", "corners": [[0, 0], [96, 0], [96, 96], [0, 96]], "moves": []}
    (folder / "labels.json").write_text(json.dumps(labels))


def test_corners_follow_the_picture(tmp_path):
    _clip(tmp_path)
    out = tmp_path / "out"
    subprocess.run([sys.executable, "-m", "real.degrade", "--labels", str(tmp_path / "labels.json"), "--out", str(out), "--only", "half", "third-turned"], cwd=TRAINING, check=True)
    for name in ["half", "third-turned"]:
        labels = json.loads((out / name / "labels.json").read_text())
        cap = cv2.VideoCapture(str(out / name / labels["video"]))
        ok, frame = cap.read()
        assert ok
        a8, h8, h1, a1 = np.array(labels["corners"])
        # Just inside the a8 corner, the red mark; inside h1, the blue one.
        for corner, opposite, colour in [(a8, h1, 2), (h1, a8, 0)]:
            x, y = (corner + (opposite - corner) * 0.05).round().astype(int)
            assert frame[y, x].argmax() == colour, (name, corner, frame[y, x])
    # A third of the size, turned a quarter counter-clockwise into 320 x 240: a8 comes to the
    # bottom left of a 32 px board in the middle.
    turned = json.loads((out / "third-turned" / "labels.json").read_text())["corners"]
    assert np.allclose(turned, [[144, 136], [144, 104], [176, 104], [176, 136]])
