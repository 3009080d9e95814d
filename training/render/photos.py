"""Turns rendered frames into a folder of labelled photos for `touchmove eval-photos`: a
`labels.json` in the afka2d shape (image, FEN, corners a8, h8, h1, a1) listing the frames with
no hand over the board and no piece in a hand.

    python -m render.frames --seed 77 --count 400 --out /tmp/stills
    python -m render.photos /tmp/stills
    touchmove eval-photos /tmp/stills
"""

import argparse
import json
from pathlib import Path


def photos(folder):
    """The labels of the frames in `folder` that show the whole position."""
    out = []
    for path in sorted(Path(folder).glob("[0-9]*.json")):
        frame = json.loads(path.read_text())
        if frame["hands_over_board"] == 0 and not frame["held"]:
            out.append({"image": frame["image"], "fen": f"{frame['fen']} w - - 0 1", "corners": frame["corners"]})
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("folder", help="frames written by render.frames")
    a = p.parse_args()
    labels = photos(a.folder)
    (Path(a.folder) / "labels.json").write_text(json.dumps(labels, indent=1) + "\n")
    print(f"{a.folder}/labels.json: {len(labels)} frames with no hand over the board")


if __name__ == "__main__":
    main()
