"""Low frame rate copies keep their labels true: the same times, the frames kept re-indexed."""

import json
import os
import sys

import cv2
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from render import lowfps  # noqa: E402


def test_a_copy_keeps_every_kth_frame_and_the_times(tmp_path):
    src = tmp_path / "clip"
    src.mkdir()
    writer = cv2.VideoWriter(str(src / "clip.mp4"), cv2.VideoWriter_fourcc(*"mp4v"), 10, (64, 48))
    for i in range(12):
        writer.write(np.full((48, 64, 3), 20 * i, np.uint8))
    writer.release()
    labels = {"format": lowfps.RENDERED, "fps": 10, "n_frames": 12,
              "events": [{"t": 0.3, "ev": "lift", "sq": "e2", "hand": "w1", "frame": 3}],
              "frames": [{"frame": i, "t": i / 10} for i in range(12)],
              "unscripted_contacts": [{"frame": 5, "sq": "e1"}, {"frame": 6, "sq": "e1"}]}
    (src / "labels.json").write_text(json.dumps(labels))
    lowfps.main(["--clips", str(tmp_path), "--fps", "2", "--out", str(tmp_path / "out")])
    copy = json.loads((tmp_path / "out" / "clip" / "labels.json").read_text())
    assert copy["fps"] == 2 and copy["n_frames"] == 3
    assert [(f["frame"], f["t"]) for f in copy["frames"]] == [(0, 0.0), (1, 0.5), (2, 1.0)]
    assert copy["events"][0]["frame"] == 1 and copy["events"][0]["t"] == 0.3
    assert copy["unscripted_contacts"] == [{"frame": 1, "sq": "e1"}]
    cap = cv2.VideoCapture(str(tmp_path / "out" / "clip" / "clip.mp4"))
    assert cap.get(cv2.CAP_PROP_FPS) == 2 and cap.get(cv2.CAP_PROP_FRAME_COUNT) == 3
