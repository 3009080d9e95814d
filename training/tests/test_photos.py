"""Rendered frames become labelled photos only where the whole position is in view."""

import json

from render.photos import photos


def test_only_frames_with_no_hand_over_the_board_and_nothing_held_are_photos(tmp_path):
    corners = [[1, 2], [3, 4], [5, 6], [7, 8]]
    for i, (over, held) in enumerate([(0, []), (1, []), (0, ["e2"])]):
        frame = {"image": f"{i:07d}.jpg", "fen": "8/8/8/8/8/8/8/8", "corners": corners, "hands_over_board": over, "held": held}
        (tmp_path / f"{i:07d}.json").write_text(json.dumps(frame))
    (tmp_path / "labels.json").write_text("[]")  # an earlier run's output is not a frame
    assert photos(tmp_path) == [{"image": "0000000.jpg", "fen": "8/8/8/8/8/8/8/8 w - - 0 1", "corners": corners}]
