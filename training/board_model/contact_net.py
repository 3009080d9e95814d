"""Trains a network of its own for the board model's contact output and grafts it in.

The shipped board network reads contact from the square features it shares with the pieces and
the cover, trained on them all at once: a fingertip resting on a piece top is a few pixels there,
and the output missed touches a person sees at a glance (`king-rook-4.4.1`'s fingertip on the
king reads 0.00). This network reads the same warped board from its own pixels, for contact
alone: a stride-2 stem and depthwise-separable blocks to stride 16 over the playing area, one
cell a square, a 3 x 3 layer mixing in the neighbouring squares (a tall piece's top leans into
them under perspective), one logit a square. It is grafted into the ONNX graph in place of the
old contact convolution, so touchmove reads it through the same `contact` output; every other
output stays bit for bit as it was (checked at the end).

It trains on still renders (`render.frames`: random positions, hands grasping, touching,
hovering and resting, with exact contact labels), with the real training photos as hand-free
boards, and is scored on rendered clips it never saw (hands in motion), against the old output.
The loss counts occupied squares only: the tracker reads contact on pieces.

Not in the shipped model: trained on this project's CPU on 3,805 stills, it reads contact no
better than the shipped output (models/README.md has the figures). It is the recipe for a run
with far more stills, where a GPU is lent:

    python -m board_model.contact_net --base ../models/board.onnx --frames /tmp/stills \\
        --real ../../shared/data --val ../fixtures/variants --out /tmp/board-contact.onnx
"""

import argparse
import json
import os
import sys
import time
from multiprocessing import Pool
from pathlib import Path

import cv2
import numpy as np
import onnx
import onnxruntime as ort
import torch
import torch.nn.functional as F
from torch import nn

from .augment import augment
from .cache import fen_classes, label_classes, prescale, real_items, split_of
from .contact_experiment import contact_mask, load_base, scores, splice, step
from .geometry import CELLS, SIZE, warp
from .net import MEAN, STD, SepBlock, conv_bn

# Stride-8 cells of margin round the playing area.
MARGIN = 3


class ContactNet(nn.Module):
    """Board pixels in, one contact logit a square out ([N, 1, 8, 8], a8 at the top left)."""

    def __init__(self):
        super().__init__()
        self.s8 = nn.Sequential(conv_bn(3, 16, 3, 2), SepBlock(16, 32, 2), SepBlock(32, 32), SepBlock(32, 32, 2), SepBlock(32, 32))
        self.s16 = nn.Sequential(SepBlock(32, 48, 2), SepBlock(48, 48))
        self.to_squares = conv_bn(48, 64, 3, 3, pad=0)
        self.context = conv_bn(64, 64)
        self.out = nn.Conv2d(64, 1, 1)

    def forward(self, board_u8):
        x = (board_u8.permute(0, 3, 1, 2).float() - MEAN) / STD
        f8 = self.s8(x)
        sq = self.to_squares(self.s16(f8[:, :, MARGIN : CELLS - MARGIN, MARGIN : CELLS - MARGIN]))
        return self.out(sq + self.context(sq))


def _still(json_path):
    label = json.loads(Path(json_path).read_text())
    image = cv2.imread(str(Path(json_path).with_suffix(".jpg")))
    board = warp(image, label["corners"], cv2.INTER_LINEAR)
    return board, label_classes(label["pieces"]), np.bool_(label["contact"]), True


def _photo(item):
    _, path, corners, fen = item
    image, corners = prescale(cv2.imread(str(path)), corners)
    return warp(image, corners, cv2.INTER_LINEAR), fen_classes(fen), np.zeros(64, np.bool_), False


def load(frame_dirs, real_root, jobs):
    """Warped boards, classes, contacts and whether hands may be in them: the rendered stills,
    then the real photos of the training split (no hands, so no contact)."""
    stills = sorted(str(j) for d in frame_dirs for j in Path(d).glob("[0-9]*.json"))
    photos = [i for i in real_items(real_root) if split_of(i[0], i[1].name) == "train"] if real_root else []
    with Pool(jobs) as pool:
        rows = pool.map(_still, stills, chunksize=16) + pool.map(_photo, photos)
    return [np.stack(c) for c in zip(*rows)]


def clip_frames(clip_dir, every):
    """Every `every`-th labelled frame of a rendered clip: warped board, classes, contacts."""
    labels = json.loads((Path(clip_dir) / "labels.json").read_text())
    video = cv2.VideoCapture(str(Path(clip_dir) / "clip.mp4"))
    out = []
    for i, frame in enumerate(labels["frames"]):
        ok, image = video.read()
        if not ok:
            break
        if i % every:
            continue
        out.append((warp(image, labels["corners"], cv2.INTER_LINEAR), label_classes(frame["pieces"]), contact_mask(frame["contact"])))
    return out


def train(data, steps, batch, lr, seed, real_fraction):
    """A ContactNet trained on `load`'s data (a `real_fraction` of each batch from the photos),
    and the seconds it took."""
    boards, classes, contacts, hands = data
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    net = ContactNet()
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps, pct_start=0.15)
    rendered, photos = np.flatnonzero(hands), np.flatnonzero(~hands)
    n_real = int(round(batch * real_fraction)) if len(photos) else 0
    no_cover, no_hands = np.zeros(64, np.float32), np.zeros((2, CELLS, CELLS), np.float32)
    start = time.time()
    for at in range(steps):
        idx = np.concatenate([rng.choice(rendered, batch - n_real), rng.choice(photos, n_real) if n_real else []]).astype(int)
        items = [augment(rng, boards[i], classes[i], no_cover, contacts[i], no_hands, bool(hands[i])) for i in idx]
        img = torch.from_numpy(np.stack([it[0] for it in items]))
        occupied = torch.from_numpy(np.stack([it[1] for it in items]) != 0).float()
        y = torch.from_numpy(np.stack([it[3] for it in items]).astype(np.float32))
        logits = net(img).reshape(len(idx), 64)
        loss = (F.binary_cross_entropy_with_logits(logits, y, pos_weight=torch.tensor(3.0), reduction="none") * occupied).sum() / occupied.sum()
        step(opt, sched, loss, at, steps, start)
    return net.eval(), time.time() - start


def graft(base, net):
    """`base` with its contact convolution replaced by `net` (exported and spliced in)."""
    path = Path(__file__).with_name(".contact_net.onnx")
    torch.onnx.export(net, (torch.zeros(1, SIZE, SIZE, 3, dtype=torch.uint8),), str(path), input_names=["board"], output_names=["logits"],
                      dynamic_axes={"board": {0: "batch"}, "logits": {0: "batch"}}, opset_version=17, dynamo=False)
    part = onnx.load(str(path))
    path.unlink()
    return splice(base, part, {"board": "board"}, "contact_net")


def check(base, grafted, net, boards):
    """The grafted model gives the net's contact and, bit for bit, the base's other outputs."""
    a, b = (ort.InferenceSession(m.SerializeToString()) for m in (base, grafted))
    names = [o.name for o in a.get_outputs()]
    for board in boards:
        x = {"board": board[None]}
        old, new = dict(zip(names, a.run(None, x))), dict(zip(names, b.run(None, x)))
        for name in ("pieces", "cover", "hands"):
            if not np.array_equal(old[name], new[name]):
                raise SystemExit(f"grafting changed the {name} output")
        with torch.no_grad():
            want = torch.sigmoid(net(torch.from_numpy(board[None]))).reshape(1, 64).numpy()
        if np.abs(want - new["contact"]).max() > 1e-4:
            raise SystemExit(f"the grafted contact differs from the net's by {np.abs(want - new['contact']).max()}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--base", required=True, help="the board model whose contact output is replaced (as board_model.train exports it)")
    p.add_argument("--frames", nargs="+", required=True, help="folders of rendered stills (render.frames) to train on")
    p.add_argument("--real", help="../shared/data: its real training photos join as boards without hands")
    p.add_argument("--val", nargs="+", required=True, help="folders of rendered clips (render.fixtures) to score on, never trained on")
    p.add_argument("--out", required=True, help="where the grafted model goes")
    p.add_argument("--steps", type=int, default=1500)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--real-fraction", type=float, default=0.1)
    p.add_argument("--val-every", type=int, default=3, help="score every this many frames of the clips")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    base = load_base(args.base)
    data = load(args.frames, args.real, args.threads)
    print(f"{int(data[3].sum())} rendered stills ({int(data[2][data[3]].sum())} contacts), {int((~data[3]).sum())} real photos", flush=True)
    net, seconds = train(data, args.steps, args.batch, args.lr, args.seed, args.real_fraction)
    torch.save(net.state_dict(), os.path.splitext(args.out)[0] + ".contact.pt")
    grafted = graft(base, net)
    clips = sorted(str(c.parent) for d in args.val for c in [*Path(d).glob("labels.json"), *Path(d).glob("*/labels.json")])
    frames = [f for c in clips for f in clip_frames(c, args.val_every)]
    boards, classes, contacts = (np.stack(c) for c in zip(*frames))
    check(base, grafted, net, boards[:3])
    old, new = (ort.InferenceSession(m.SerializeToString()) for m in (base, grafted))
    run = lambda s: np.concatenate([s.run(["contact"], {"board": boards[i : i + 16]})[0] for i in range(0, len(boards), 16)])  # noqa: E731
    report = {"frames": len(boards), "old": scores(run(old), classes != 0, contacts), "new": scores(run(new), classes != 0, contacts)}
    print(json.dumps(report, indent=1))
    onnx.save(grafted, args.out)
    log = os.path.splitext(args.out)[0] + ".contact.json"
    with open(log, "w") as f:
        json.dump({"args": vars(args), "stills": int(data[3].sum()), "seconds": seconds, "val": report}, f, indent=1)
    print(f"wrote {args.out} and {log}")


if __name__ == "__main__":
    sys.exit(main())
