"""Loads an exported board model (an ONNX file `train` wrote: batch norms folded into the
convolutions, inner channels widened with zeros) back into `BoardNet`, so that a shipped model
can be fine-tuned when its `.pt` is gone.

Each convolution is found by its node's name (the module's path: `/s8/s8.1/dw/dw.0/Conv` is
`s8.1.dw.0`) and cut back to the net's channel counts. A folded batch norm comes back as the
affine map the fold left (running mean 0, variance 1, the folded bias as its bias), then is given
the statistics of the convolution's output over training boards, scale and mean moved so that its
output is unchanged: in training mode, normalising by a batch's statistics then gives back about
what the model computed, so a fine-tune starts from the shipped model and not from a
re-normalised one. The result is checked against ONNX Runtime on the boards.

    python -m board_model.from_onnx ../models/board.onnx OUT.pt --width 1.25 --cache CACHE
"""

import argparse

import numpy as np
import onnx
import torch
from onnx import numpy_helper
from torch import nn

from .net import BoardNet
from .train import load_cache


def module_path(node_name):
    """The module a node's name comes from: `/s8/s8.1/dw/dw.0/Conv` is `s8.1.dw.0` (each scope
    names the module within the one before it, and a `Sequential`'s child repeats its name)."""
    path = []
    for part in node_name.strip("/").split("/")[:-1]:
        if path and part.startswith(path[-1] + "."):
            path[-1] = part
        else:
            path.append(part)
    return ".".join(path)


def load(path, width, boards):
    """A `BoardNet` of `width` with the weights of the ONNX model at `path`; `boards` (uint8
    [N, SIZE, SIZE, 3]) give the batch norms their statistics."""
    model = onnx.load(path)
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    net = BoardNet(width)
    modules = dict(net.named_modules())
    folded, loaded = [], set()
    for node in model.graph.node:
        if node.op_type != "Conv":
            continue
        path_ = module_path(node.name)
        loaded.add(path_)
        conv = modules[path_]
        weight = inits[node.input[1]]
        bias = inits[node.input[2]] if len(node.input) > 2 else np.zeros(weight.shape[0], np.float32)
        out_c, in_c = conv.weight.shape[:2]
        conv.weight.data = torch.from_numpy(weight[:out_c, :in_c].copy())
        parent, _, index = path_.rpartition(".")
        norm = modules.get(f"{parent}.{int(index) + 1}") if index.isdigit() else None
        if isinstance(norm, nn.BatchNorm2d):
            norm.weight.data.fill_(1.0)
            norm.bias.data = torch.from_numpy(bias[:out_c].copy())
            norm.running_mean.zero_()
            norm.running_var.fill_(1.0 - norm.eps)
            folded.append((conv, norm))
        else:
            conv.bias.data = torch.from_numpy(bias[:out_c].copy())
    names = {path_ for path_, m in modules.items() if isinstance(m, nn.Conv2d)}
    if names != loaded:
        raise ValueError(f"{path}: convolutions {sorted(names ^ loaded)} are not in both the net and the file")
    _restore_statistics(net, folded, torch.from_numpy(boards))
    return net


@torch.no_grad()
def _restore_statistics(net, folded, boards):
    """Gives each folded batch norm its convolution's output statistics over `boards`,
    leaving what the net computes in evaluation mode unchanged."""
    net.eval()
    stats = {}
    hooks = [conv.register_forward_hook(lambda m, _, y: stats.__setitem__(m, (y.mean((0, 2, 3)), y.std((0, 2, 3)) + 1e-3))) for conv, _ in folded]
    net(boards)
    for h in hooks:
        h.remove()
    for conv, norm in folded:
        mean, std = stats[conv]
        # y -> (y - mean) / sqrt(var + eps) * weight + bias must stay y -> y + folded bias.
        norm.running_mean.copy_(mean)
        norm.running_var.copy_(std**2 - norm.eps)
        norm.weight.copy_(std)
        norm.bias.add_(mean)


def check(net, path, boards, tolerance=1e-3):
    """Raises if the net's outputs differ from ONNX Runtime's on `boards`."""
    import onnxruntime as ort

    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()][:4]
    want = session.run(names, {"board": boards})
    net.eval()
    with torch.no_grad():
        got = [t.numpy() for t in net(torch.from_numpy(boards))]
    for name, w, g in zip(names, want, got):
        if np.abs(w - g).max() > tolerance:
            raise ValueError(f"{name}: differs from the ONNX model by {np.abs(w - g).max():.2g}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("onnx")
    p.add_argument("out", help="the .pt to write (for `train --init`)")
    p.add_argument("--width", type=float, required=True, help="the width the model was trained at (its .train.json)")
    p.add_argument("--cache", required=True, help="a training cache: its boards give the statistics")
    p.add_argument("--boards", type=int, default=48)
    a = p.parse_args()
    images, _ = load_cache(a.cache)
    pick = np.random.default_rng(0).choice(len(images), min(a.boards, len(images)), replace=False)
    boards = np.ascontiguousarray(images[np.sort(pick)])
    net = load(a.onnx, a.width, boards)
    check(net, a.onnx, boards[:8])
    torch.save(net.state_dict(), a.out)
    print(f"{a.out}: {a.onnx} as BoardNet(width={a.width}), outputs within 1e-3 of ONNX Runtime's")


if __name__ == "__main__":
    main()
