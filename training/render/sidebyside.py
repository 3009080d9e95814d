"""Side-by-side sheet: rendered frames next to real photos from ../shared/data.

    python -m render.sidebyside --renders DIR [--out docs/side_by_side.jpg]

Only the permissively licensed sets are used (afka2d MIT, webcam-boards Apache-2.0,
phone-photos-fen WTFPL); the GPL clip is never read here.
"""
from __future__ import annotations

import argparse
import json
import os

import cv2
import numpy as np

from .assets import shared_dir

TW, TH = 320, 240


def _fit(img, box=None, margin=0.12):
    """Crop to the box (x0,y0,x1,y1) grown by margin, then to 4:3, and resize to TWxTH."""
    h, w = img.shape[:2]
    if box is not None:
        x0, y0, x1, y1 = box
        mx, my = (x1 - x0) * margin, (y1 - y0) * margin
        x0, y0, x1, y1 = max(0, x0 - mx), max(0, y0 - my), min(w, x1 + mx), min(h, y1 + my)
    else:
        x0, y0, x1, y1 = 0, 0, w, h
    cw, ch = x1 - x0, y1 - y0
    if cw / ch > 4 / 3:
        nw = ch * 4 / 3
        x0 += (cw - nw) / 2
        x1 = x0 + nw
    else:
        nh = cw * 3 / 4
        y0 += (ch - nh) / 2
        y1 = y0 + nh
    crop = img[int(y0):int(y1), int(x0):int(x1)]
    return cv2.resize(crop, (TW, TH), interpolation=cv2.INTER_AREA)


def real_tiles():
    d = shared_dir() / "data"
    tiles = []
    af = json.load(open(d / "afka2d-overhead-photos/labels.json"))
    n_af = 0
    for e in af[::6]:
        img = cv2.imread(str(d / "afka2d-overhead-photos" / e["image"]))
        c = np.array(e["corners"])
        bw, bh = np.ptp(c, 0)
        if bw * bh < 0.2 * img.shape[0] * img.shape[1]:  # corners not covering the board: skip
            continue
        tiles.append((_fit(img, (*c.min(0), *c.max(0))), "afka2d (MIT)"))
        n_af += 1
        if n_af == 5:
            break
    wb = json.load(open(d / "webcam-boards/labels.json"))
    for e in [x for x in wb if x["fen_board"] != "8/8/8/8/8/8/8/8"][::2][:3]:
        img = cv2.imread(str(d / "webcam-boards" / e["image"]))
        c = np.array(e["warp_points"])
        tiles.append((_fit(img, (*c.min(0), *c.max(0))), "webcam-boards (Apache-2.0)"))
    for name in ("photo02.jpg", "photo08.jpg"):
        img = cv2.imread(str(d / "phone-photos-fen" / name))
        tiles.append((_fit(img), "phone-photos-fen (WTFPL)"))
    return tiles[:10]


def render_tiles(folder, n=10):
    labs = sorted(f for f in os.listdir(folder) if f.endswith(".json"))
    # prefer frames with hands, but keep some without
    scored = []
    for f in labs:
        L = json.load(open(os.path.join(folder, f)))
        scored.append((len(L["hands"]) > 0, f, L))
    with_h = [x for x in scored if x[0]]
    without = [x for x in scored if not x[0]]
    pick = with_h[:7] + without[:3]
    pick += [x for x in with_h[7:]][: n - len(pick)]
    pick = pick[:n]
    tiles = []
    for _, f, L in pick:
        img = cv2.imread(os.path.join(folder, L["image"]))
        c = np.array(L["corners"])
        tiles.append((_fit(img, (*c.min(0), *c.max(0)), margin=0.15), "render"))
    return tiles


def label(img, text):
    out = img.copy()
    cv2.rectangle(out, (0, TH - 18), (TW, TH), (0, 0, 0), -1)
    cv2.putText(out, text, (4, TH - 5), cv2.FONT_HERSHEY_SIMPLEX, 0.42, (255, 255, 255), 1, cv2.LINE_AA)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--renders", required=True)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--out", default=os.path.join(here, "..", "docs", "side_by_side.jpg"))
    args = ap.parse_args(argv)
    R = render_tiles(args.renders)
    Q = real_tiles()
    rows = []
    for i in range(5):
        row = [label(R[2 * i][0], R[2 * i][1]),
               label(R[2 * i + 1][0], R[2 * i + 1][1]),
               np.full((TH, 8, 3), 255, np.uint8),
               label(Q[2 * i][0], Q[2 * i][1]), label(Q[2 * i + 1][0], Q[2 * i + 1][1])]
        rows.append(np.hstack(row))
    sheet = np.vstack(rows)
    head = np.full((28, sheet.shape[1], 3), 255, np.uint8)
    cv2.putText(head, "rendered (pyrender, this renderer)", (10, 20), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (0, 0, 0), 1,
                cv2.LINE_AA)
    cv2.putText(head, "real (../shared/data)", (2 * TW + 18, 20), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (0, 0, 0), 1,
                cv2.LINE_AA)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    cv2.imwrite(args.out, np.vstack([head, sheet]), [cv2.IMWRITE_JPEG_QUALITY, 85])
    print("wrote", os.path.abspath(args.out))


if __name__ == "__main__":
    main()
