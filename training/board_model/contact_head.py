"""Retrains the board model's contact output on rendered clips, the rest of the model frozen.

The shipped network reads contact from its 8 x 8 square features alone, one cell a square: a
fingertip on a piece is a few pixels, and that cell has pooled them away. This head looks at the
stride-8 features as well (6 x 6 cells a square, the resolution the hand maps come from): a 1 x 1
and a 3 x 3 convolution there, the max and the mean of each square's cells, those next to the
square features, then a 1 x 1 and a 3 x 3 convolution (the neighbouring squares: a tall piece
leans into them) down to one logit a square.

It trains on the per-frame labels of rendered clips (`render.fixtures` from other seeds than
the committed fixtures: a hand in motion touching, grasping, hovering), not on still frames, and
only the head is trained, so every other output of the model stays exactly as it was (the check
at the end compares them). The head is then grafted into the ONNX graph in place of the old
contact convolution.

Not in the shipped model yet: the head reads contacts better frame by frame, but the tracker's
touch logic, tuned on the old head, does not turn that into more rulings (models/README.md).

    python -m board_model.contact_head --base ../models/board.onnx --clips /tmp/seeds2000 /tmp/seeds3000 \\
        --val ../fixtures/variants --out ../models/board.onnx
"""

import argparse
import json
import os
import sys
import time

import cv2
import numpy as np
import onnx
import onnxruntime as ort
import torch
import torch.nn.functional as F
from torch import nn

from . import geometry
from .contact_experiment import contact_mask, load_base, scores, splice, step

# The tensors of the shipped graph the head reads: the stride-8 features (54 x 54 cells, the
# playing area is cells 3..51) and the square features (8 x 8) the other heads read.
F8 = "/s8/s8.2/act/Relu_output_0"
SQ = "/Add_output_0"
MARGIN = 3
# Stride-8 cells a square.
CELL = 6


class ContactHead(nn.Module):
    def __init__(self, c8, csq, width=32):
        super().__init__()
        self.local = nn.Sequential(nn.Conv2d(c8, width, 1), nn.ReLU(), nn.Conv2d(width, width, 3, padding=1), nn.ReLU())
        self.mix = nn.Sequential(nn.Conv2d(2 * width + csq, 64, 1), nn.ReLU(), nn.Conv2d(64, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 1, 1))

    def forward(self, f8, sq):
        """f8: [N, c8, 54, 54] (the whole warp), sq: [N, csq, 8, 8]; logits [N, 1, 8, 8]."""
        x = self.local(f8[:, :, MARGIN:-MARGIN, MARGIN:-MARGIN])
        return self.mix(torch.cat([F.max_pool2d(x, CELL), F.avg_pool2d(x, CELL), sq], 1))


def probe(model):
    """A session of `model` that also outputs the features the head reads."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    for name in (F8, SQ):
        model.graph.output.append(onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
    return ort.InferenceSession(model.SerializeToString())


def run(session, board):
    """The outputs of `session` on one warped board, by name."""
    return dict(zip([o.name for o in session.get_outputs()], session.run(None, {"board": board[None]})))


def boards(clip_dir):
    """Each labelled frame of a rendered clip and the frame warped to the board."""
    with open(os.path.join(clip_dir, "labels.json")) as f:
        labels = json.load(f)
    corners = [tuple(c) for c in labels["corners"]]
    video = cv2.VideoCapture(os.path.join(clip_dir, "clip.mp4"))
    for frame in labels["frames"]:
        ok, image = video.read()
        if not ok:
            return
        yield frame, geometry.warp(image, corners, interpolation=cv2.INTER_LINEAR)


def features(session, clip_dir, cache):
    """Per frame of the clip: stride-8 features of the playing area (float16), square features
    (float16), the shipped contact output, the labelled contacts and occupied squares, through
    `session` (see `probe`). Cached."""
    out = os.path.join(cache, os.path.basename(os.path.dirname(os.path.abspath(clip_dir))) + "__" + os.path.basename(os.path.abspath(clip_dir)) + ".npz")
    if os.path.exists(out):
        return dict(np.load(out))
    rows = {k: [] for k in ("f8", "sq", "contact", "y", "occ")}
    for frame, board in boards(clip_dir):
        o = run(session, board)
        rows["f8"].append(o[F8][0, :, MARGIN:-MARGIN, MARGIN:-MARGIN].astype(np.float16))
        rows["sq"].append(o[SQ][0].astype(np.float16))
        rows["contact"].append(o["contact"][0])
        rows["y"].append(contact_mask(frame["contact"]).astype(np.uint8))
        rows["occ"].append(np.array([c != "." for c in frame["pieces"]]))
    arrays = {k: np.array(v) for k, v in rows.items()}
    os.makedirs(cache, exist_ok=True)
    np.savez(out, **arrays)
    return arrays


def clips_under(dirs):
    for d in dirs:
        for name in sorted(os.listdir(d)):
            if os.path.exists(os.path.join(d, name, "labels.json")):
                yield os.path.join(d, name)


def load(session, dirs, cache):
    parts = [features(session, clip, cache) for clip in clips_under(dirs)]
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def _pad(f8):
    """The playing area's features back in a whole warp's frame (the head crops it)."""
    return F.pad(f8, (MARGIN, MARGIN, MARGIN, MARGIN))


def train(data, steps, batch, lr, seed):
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    head = ContactHead(data["f8"].shape[1], data["sq"].shape[1])
    opt = torch.optim.AdamW(head.parameters(), lr=lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps)
    n = len(data["y"])
    start = time.time()
    for at in range(steps):
        idx = rng.integers(0, n, batch)
        f8 = _pad(torch.from_numpy(data["f8"][idx].astype(np.float32)))
        sq = torch.from_numpy(data["sq"][idx].astype(np.float32))
        y = torch.from_numpy(data["y"][idx].reshape(batch, 1, 8, 8).astype(np.float32))
        if rng.random() < 0.5:  # a mirror of the files keeps each piece on its square
            f8, sq, y = f8.flip(3), sq.flip(3), y.flip(3)
        loss = F.binary_cross_entropy_with_logits(head(f8, sq), y, pos_weight=torch.tensor(3.0))
        step(opt, sched, loss, at, steps, start)
    return head.eval(), time.time() - start


def predict(head, data):
    out = []
    with torch.no_grad():
        for i in range(0, len(data["y"]), 64):
            f8 = _pad(torch.from_numpy(data["f8"][i : i + 64].astype(np.float32)))
            sq = torch.from_numpy(data["sq"][i : i + 64].astype(np.float32))
            out.append(torch.sigmoid(head(f8, sq)).reshape(-1, 64).numpy())
    return np.concatenate(out)


def graft(base, head):
    """`base` with its contact convolution replaced by `head` (exported and spliced in)."""
    c8 = head.local[0].in_channels
    csq = head.mix[0].in_channels - 2 * head.local[0].out_channels
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), ".contact_head.onnx")
    torch.onnx.export(head, (torch.zeros(1, c8, 54, 54), torch.zeros(1, csq, 8, 8)), path, input_names=["f8", "sq"], output_names=["logits"], opset_version=17, dynamo=False)
    part = onnx.load(path)
    os.remove(path)
    return splice(base, part, {"f8": F8, "sq": SQ}, "contact_head")


def check(base, grafted, head, clip_dir):
    """The grafted model gives the head's contact and, bit for bit, the base's other outputs."""
    sessions = [ort.InferenceSession(m.SerializeToString()) for m in (base, grafted)]
    with_features = probe(base)
    for checked, (_, board) in enumerate(boards(clip_dir), 1):
        a, b = (run(s, board) for s in sessions)
        for name in ("pieces", "cover", "hands"):
            if not np.array_equal(a[name], b[name]):
                raise SystemExit(f"grafting changed the {name} output")
        f = run(with_features, board)
        with torch.no_grad():
            want = torch.sigmoid(head(torch.from_numpy(f[F8]), torch.from_numpy(f[SQ]))).reshape(1, 64).numpy()
        if np.abs(want - b["contact"]).max() > 1e-4:
            raise SystemExit(f"the grafted contact differs from the head's by {np.abs(want - b['contact']).max()}")
        if checked == 3:
            return
    raise SystemExit(f"{clip_dir}: the clip has fewer than three frames")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--base", required=True, help="the board model whose contact output is replaced (the old contact convolution must be in it)")
    p.add_argument("--clips", nargs="+", required=True, help="directories of rendered clips (render.fixtures) to train on")
    p.add_argument("--val", nargs="+", required=True, help="directories of rendered clips to score on (not trained on)")
    p.add_argument("--out", required=True, help="where the grafted model goes")
    p.add_argument("--cache", default="/tmp/touchmove-contact-features", help="where per-clip features are kept between runs")
    p.add_argument("--steps", type=int, default=1500)
    p.add_argument("--batch", type=int, default=48)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    base = load_base(args.base)
    with_features = probe(base)
    train_set = load(with_features, args.clips, args.cache)
    val_set = load(with_features, args.val, args.cache)
    print(f"{len(train_set['y'])} training frames, {len(val_set['y'])} validation frames", flush=True)
    head, seconds = train(train_set, args.steps, args.batch, args.lr, args.seed)
    torch.save(head.state_dict(), os.path.splitext(args.out)[0] + ".contact.pt")
    report = {"old": scores(val_set["contact"], val_set["occ"], val_set["y"]), "new": scores(predict(head, val_set), val_set["occ"], val_set["y"])}
    print(json.dumps(report, indent=1))
    grafted = graft(base, head)
    check(base, grafted, head, next(clips_under(args.val)))
    onnx.save(grafted, args.out)
    log = os.path.splitext(args.out)[0] + ".contact.json"
    with open(log, "w") as f:
        json.dump({"args": vars(args) | {"clips": args.clips, "val": args.val}, "train_frames": len(train_set["y"]), "seconds": seconds, "val": report}, f, indent=1)
    print(f"wrote {args.out} and {log}")


if __name__ == "__main__":
    sys.exit(main())
