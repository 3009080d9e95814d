"""Trains the board network on the cache (`board_model.cache`) and exports it to ONNX.

    python -m board_model.train --cache CACHE --out ../models/board.onnx [--minutes 100] [--seed 1]

Reproducible from the seed (same data, same order, same augmentations; CPU kernels may still
differ in the last bits between machines). Training runs for a fixed number of steps (`--steps`)
sized to fit two CPU hours on two cores; `--minutes` stops early if the machine is slower.
Held-out images (split "test" for real photos, "val" for renders) are never trained on; their
scores are printed at the end and written beside the model as JSON.
"""

import argparse
import json
import math
import time
from pathlib import Path

import cv2
import numpy as np
import onnx
import torch
import torch.nn.functional as F

from .augment import augment
from .features import add_features
from .geometry import SIZE
from .net import BoardNet
from .widen import check_same, widen


def load_cache(path):
    path = Path(path)
    z = np.load(path / "labels.npz")
    labels = {k: z[k] for k in z.files}
    n = len(labels["classes"])
    images = np.empty((n, SIZE, SIZE, 3), np.uint8)
    for i in range(n):
        images[i] = cv2.imread(str(path / "img" / f"{i:06d}.jpg"))
    return images, labels


def batch(rng, images, labels, indices, train=True):
    out = ([], [], [], [], [], [])
    for i in indices:
        has_hands = labels["set"][i] == "synthetic"
        item = (images[i], labels["classes"][i], labels["cover"][i].astype(np.float32), labels["contact"][i], labels["hands"][i].astype(np.float32) / 255.0)
        if train:
            item = augment(rng, *item, has_hands)
        for o, v in zip(out, (*item, has_hands)):
            o.append(v)
    img, cls, cov, con, hands, hh = (np.stack(o) for o in out)
    return (torch.from_numpy(img), torch.from_numpy(cls.astype(np.int64)), torch.from_numpy(cov), torch.from_numpy(con.astype(np.float32)), torch.from_numpy(hands), torch.from_numpy(hh))


class Batches(torch.utils.data.Dataset):
    """Training batch `step` is a pure function of (seed, step), whatever the worker count."""

    def __init__(self, seed, images, labels, batch_size, n_real, train_syn, train_real):
        self.seed, self.images, self.labels = seed, images, labels
        self.batch_size, self.n_real, self.train_syn, self.train_real = batch_size, n_real, train_syn, train_real

    def __len__(self):
        return 1 << 30

    def __getitem__(self, step):
        rng = np.random.default_rng([self.seed, step])
        syn = rng.choice(self.train_syn, self.batch_size - self.n_real)
        idx = np.concatenate([syn, rng.choice(self.train_real, self.n_real)]) if self.n_real else syn
        return batch(rng, self.images, self.labels, idx)


def loss_of(model, b, real_weight):
    img, cls, cov, con, hands, has_hands = b
    p, c, k, h = model.logits(img)
    w = torch.where(has_hands, 1.0, real_weight)
    l_cls = (F.cross_entropy(p.transpose(1, 2), cls, reduction="none", label_smoothing=0.02).mean(1) * w).mean()
    l_cov = F.binary_cross_entropy_with_logits(c, cov)
    l_con = F.binary_cross_entropy_with_logits(k, con, pos_weight=torch.tensor(3.0))
    l_hand = F.binary_cross_entropy_with_logits(h, hands)
    return l_cls + l_cov + l_con + l_hand, (l_cls.item(), l_cov.item(), l_con.item(), l_hand.item())


@torch.no_grad()
def evaluate(model, images, labels, split):
    """Scores per set on the images of `split`: per-square class accuracy, occupancy-and-colour
    accuracy, whole boards right; on renders also cover error and contact F1."""
    model.eval()
    scores = {}
    for s in sorted(set(labels["set"])):
        idx = np.where((labels["set"] == s) & (labels["split"] == split))[0]
        if len(idx) == 0:
            continue
        preds, covs, cons = [], [], []
        for j in range(0, len(idx), 32):
            img = torch.from_numpy(images[idx[j:j + 32]])
            p, c, k, _ = model(img)
            preds.append(p.argmax(-1).numpy())
            covs.append(c.numpy())
            cons.append(k.numpy())
        pred, truth = np.concatenate(preds).astype(np.int64), labels["classes"][idx].astype(np.int64)
        colour = lambda a: np.where(a == 0, 0, np.where(a <= 6, 1, 2))  # noqa: E731
        r = {
            "images": int(len(idx)),
            "square_accuracy": float((pred == truth).mean()),
            "occupancy_colour_accuracy": float((colour(pred) == colour(truth)).mean()),
            "board_accuracy": float((pred == truth).all(1).mean()),
            "confusion": np.bincount(truth.ravel() * 13 + pred.ravel(), minlength=169).reshape(13, 13).tolist(),
        }
        if s == "synthetic":
            cov, con = np.concatenate(covs), np.concatenate(cons) > 0.5
            tc = labels["contact"][idx]
            tp, fp, fn = (con & tc).sum(), (con & ~tc).sum(), (~con & tc).sum()
            r["cover_mae"] = float(np.abs(cov - labels["cover"][idx].astype(np.float32)).mean())
            covered = labels["cover"][idx] > 0.05
            r["cover_mae_where_covered"] = float(np.abs(cov - labels["cover"][idx].astype(np.float32))[covered].mean())
            r["contact_precision"] = float(tp / max(1, tp + fp))
            r["contact_recall"] = float(tp / max(1, tp + fn))
            r["contact_f1"] = float(2 * tp / max(1, 2 * tp + fp + fn))
        scores[s] = r
    model.train()
    return scores


def export(model, path):
    model.eval()
    dummy = torch.zeros(1, SIZE, SIZE, 3, dtype=torch.uint8)
    torch.onnx.export(
        model, (dummy,), str(path), opset_version=17, dynamo=False,
        input_names=["board"], output_names=["pieces", "cover", "contact", "hands"],
        dynamic_axes={n: {0: "batch"} for n in ["board", "pieces", "cover", "contact", "hands"]},
    )
    exported = onnx.load(str(path))
    widened = widen(exported)
    check_same(exported, widened)
    onnx.save(add_features(widened), str(path))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cache", required=True)
    p.add_argument("--out", required=True, help="the ONNX file to write")
    p.add_argument("--steps", type=int, default=6000)
    p.add_argument("--batch", type=int, default=24)
    p.add_argument("--real-fraction", type=float, default=0.3, help="share of each batch from real training photos")
    p.add_argument("--real-weight", type=float, default=2.0)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--width", type=float, default=1.0)
    p.add_argument("--minutes", type=float, default=115.0, help="stop early after this long")
    p.add_argument("--threads", type=int, default=2, help="torch threads for the network")
    p.add_argument("--workers", type=int, default=1, help="processes preparing batches")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--device", default="cpu")
    p.add_argument("--init", help="start from these weights (a .pt the training wrote): a fine-tune")
    p.add_argument("--train-only", metavar="MODULE", help="train only this module (`pieces`: the piece head), the rest frozen as --init has it, batch norms included")
    a = p.parse_args()
    torch.manual_seed(a.seed)
    torch.set_num_threads(a.threads)
    images, labels = load_cache(a.cache)
    train_syn = np.where((labels["set"] == "synthetic") & (labels["split"] == "train"))[0]
    train_real = np.where((labels["set"] != "synthetic") & (labels["split"] == "train"))[0]
    print(f"training on {len(train_syn)} renders and {len(train_real)} real photos", flush=True)
    model = BoardNet(a.width)
    if a.init:
        model.load_state_dict(torch.load(a.init, map_location="cpu"))
    model = model.to(a.device)
    trained = dict(model.named_modules())[a.train_only] if a.train_only else model
    for param in model.parameters():
        param.requires_grad = False
    for param in trained.parameters():
        param.requires_grad = True
    model.eval()
    trained.train()
    opt = torch.optim.AdamW(trained.parameters(), lr=a.lr, weight_decay=1e-4)
    n_real = int(round(a.batch * a.real_fraction)) if len(train_real) else 0
    batches = Batches(a.seed, images, labels, a.batch, n_real, train_syn, train_real)
    loader = torch.utils.data.DataLoader(batches, batch_size=None, sampler=range(a.steps), num_workers=a.workers, prefetch_factor=4 if a.workers else None)
    started = time.time()
    for step, b in enumerate(loader):
        lr = a.lr * 0.5 * (1 + math.cos(math.pi * step / a.steps)) * min(1.0, (step + 1) / 200)
        for g in opt.param_groups:
            g["lr"] = lr
        b = [t.to(a.device, non_blocking=True) for t in b]
        loss, parts = loss_of(model, b, a.real_weight)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0 or step == a.steps - 1:
            el = time.time() - started
            print(f"step {step} loss {loss.item():.3f} (cls {parts[0]:.3f} cover {parts[1]:.3f} contact {parts[2]:.3f} hands {parts[3]:.3f}) lr {lr:.5f} {el / 60:.1f} min", flush=True)
        if time.time() - started > a.minutes * 60:
            print(f"stopping at step {step}: --minutes {a.minutes} reached", flush=True)
            break
    model = model.cpu()
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), out.with_suffix(".pt"))
    scores = {"val": evaluate(model, images, labels, "val"), "test": evaluate(model, images, labels, "test"), "train": evaluate(model, images, labels, "train")}
    for split, per_set in scores.items():
        for s, r in per_set.items():
            extra = f" cover MAE {r['cover_mae']:.4f} contact F1 {r['contact_f1']:.3f}" if "cover_mae" in r else ""
            print(f"{split:5s} {s:10s} n={r['images']:4d} square {r['square_accuracy']:.4f} occ+colour {r['occupancy_colour_accuracy']:.4f} boards {r['board_accuracy']:.3f}{extra}")
    try:
        export(model, out)
    except Exception as e:  # a torch without the TorchScript exporter: export later with --export-only
        print(f"ONNX export failed ({e}); the weights are in {out.with_suffix('.pt')}")
    meta = {"steps": step + 1, "seconds": time.time() - started, "args": vars(a), "scores": scores}
    out.with_suffix(".train.json").write_text(json.dumps(meta, indent=1) + "\n")


if __name__ == "__main__":
    main()
