"""Works out which way round each real photo lies, for the sets whose labels do not say it
reliably, and writes `orientation.json` / `phone-photos-fen.corners.json` beside this file.

    python real/orient.py ../../shared/data [--corners-from DIR]

For each photo the playing area (webcam-boards: the labelled `warp_points`; phone-photos-fen:
the corners `touchmove calibrate` found, in image order, from `--corners-from`) is warped as seen,
and of the four quarter turns the one is kept under which the squares the FEN says hold White's
pieces are brightest relative to Black's. Empty boards keep 0 turns. Check the sheet it writes
(`orientation.jpg`) by eye before trusting it.
"""

import json
import sys
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from board_model.cache import LETTERS, fen_classes, prescale  # noqa: E402
from board_model.geometry import MARGIN, SQUARE, rotate_corners, warp  # noqa: E402


def best_turns(image, image_order, fen):
    classes = fen_classes(fen)
    if not classes.any():
        return 0, 0.0
    scores = []
    for turns in range(4):
        img, c = prescale(image, rotate_corners(image_order, turns))
        board = cv2.cvtColor(warp(img, c, cv2.INTER_LINEAR), cv2.COLOR_BGR2GRAY).astype(np.float32)
        lum = np.array([board[MARGIN + r * SQUARE + 12: MARGIN + r * SQUARE + 36, MARGIN + f * SQUARE + 12: MARGIN + f * SQUARE + 36].mean() for r in range(8) for f in range(8)])
        white = (classes >= 1) & (classes <= 6)
        black = classes >= 7
        scores.append(lum[white].mean() - lum[black].mean())
    order = np.argsort(scores)[::-1]
    return int(order[0]), float(scores[order[0]] - scores[order[1]])


def main():
    root = Path(sys.argv[1])
    here = Path(__file__).resolve().parent
    sheet = []
    orient = json.loads((here / "orientation.json").read_text())
    orient["webcam-boards"] = {}
    for label in json.loads((root / "webcam-boards/labels.json").read_text()):
        if "image" not in label:
            continue
        image = cv2.imread(str(root / "webcam-boards" / label["image"]))
        turns, margin = best_turns(image, label["warp_points"], label["fen_board"])
        orient["webcam-boards"][label["image"]] = turns
        print("webcam", label["image"], turns, f"{margin:.1f}")
        img, c = prescale(image, rotate_corners(label["warp_points"], turns))
        sheet.append(warp(img, c, cv2.INTER_LINEAR))
    (here / "orientation.json").write_text(json.dumps(orient, indent=1) + "\n")
    if len(sys.argv) > 3 and sys.argv[2] == "--corners-from":
        found = {}
        for label in json.loads((root / "phone-photos-fen/labels.json").read_text()):
            cal = json.loads((Path(sys.argv[3]) / (Path(label["image"]).stem + ".json")).read_text())
            # calibrate ran with --white bottom, so its a8,h8,h1,a1 are the image-order corners.
            image_order = [[round(p["x"], 1), round(p["y"], 1)] for p in cal["corners"]]
            image = cv2.imread(str(root / "phone-photos-fen" / label["image"]))
            turns, margin = best_turns(image, image_order, label["fen_board"])
            print("phone", label["image"], turns, f"{margin:.1f}")
            found[label["image"]] = {"image_order": image_order, "quarter_turns": turns}
            img, c = prescale(image, rotate_corners(image_order, turns))
            sheet.append(warp(img, c, cv2.INTER_LINEAR))
        (here / "phone-photos-fen.corners.json").write_text(json.dumps(found, indent=1) + "\n")
    small = [cv2.resize(s, (216, 216)) for s in sheet]
    while len(small) % 6:
        small.append(np.zeros_like(small[0]))
    rows = [np.hstack(small[i:i + 6]) for i in range(0, len(small), 6)]
    cv2.imwrite("/tmp/orientation.jpg", np.vstack(rows))


if __name__ == "__main__":
    main()
