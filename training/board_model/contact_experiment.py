"""What the two contact experiments (`contact_head`, `contact_net`) share: one optimiser step
with its log line, the score of a contact output, and the splice of a network into the board
model's ONNX graph in place of its contact convolution, every other output left as it was."""

import time

import numpy as np
import onnx

# The old contact convolution, and the tensor it gives (logits [N, 1, 8, 8]).
OLD = "/contact/Conv"
LOGITS = "/contact/Conv_output_0"


def contact_mask(squares):
    """[64] booleans in FEN reading order (a8 = 0, h1 = 63) from a frame label's `contact`
    (square names)."""
    mask = np.zeros(64, np.bool_)
    for name in squares:
        mask[(8 - int(name[1])) * 8 + ord(name[0]) - 97] = True
    return mask


def step(opt, sched, loss, at, steps, start):
    """One optimiser step on `loss`; every hundredth step and the last are logged."""
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    if at % 100 == 0 or at == steps - 1:
        print(f"step {at}: loss {loss.item():.4f} ({time.time() - start:.0f} s)", flush=True)


def scores(pred, occupied, contacts):
    """Average precision and the best F1 of a contact output over the occupied squares of every
    frame (arrays [frames, 64])."""
    keep = occupied.reshape(-1)
    s, y = pred.reshape(-1)[keep], contacts.reshape(-1)[keep].astype(bool)
    hits = y[np.argsort(-s)]
    precision = np.cumsum(hits) / np.arange(1, len(hits) + 1)
    ap = float((precision * hits).sum() / max(1, hits.sum()))
    f1, th = max((2 * (p & y).sum() / max(1, p.sum() + y.sum()), th) for th in np.linspace(0.05, 0.95, 19) for p in [s >= th])
    return {"squares": int(keep.sum()), "contacts": int(y.sum()), "average_precision": ap, "best_f1": float(f1), "best_f1_threshold": float(th)}


def has_contact_conv(model):
    """Whether `model` still has the contact convolution (as board_model.train exports it)."""
    return any(n.name == OLD for n in model.graph.node)


def load_base(path):
    """The board model at `path`, which must still have its contact convolution."""
    base = onnx.load(path)
    if not has_contact_conv(base):
        raise SystemExit(f"{path}: no contact convolution: give the model as board_model.train exports it")
    return base


def splice(base, part, inputs, prefix):
    """`base` with its contact convolution replaced by the graph `part`, whose output `logits`
    takes the convolution's place. `inputs` maps each input name of `part` to the tensor of
    `base` it reads; `part`'s other names get `prefix` so they cannot clash."""
    model = onnx.ModelProto.FromString(base.SerializeToString())
    graph = model.graph
    old = next(n for n in graph.node if n.name == OLD)
    at = list(graph.node).index(old)
    dead = set(old.input[1:])
    rename = inputs | {"logits": LOGITS}
    local = lambda name: rename.get(name, f"{prefix}." + name.lstrip("/")) if name else name  # noqa: E731
    nodes = []
    for node in part.graph.node:
        node.name = f"/{prefix}" + node.name
        node.input[:] = [local(n) for n in node.input]
        node.output[:] = [local(n) for n in node.output]
        nodes.append(node)
    for init in part.graph.initializer:
        init.name = local(init.name)
    del graph.node[at]
    for i, node in enumerate(nodes):
        graph.node.insert(at + i, node)
    kept = [i for i in graph.initializer if i.name not in dead]
    del graph.initializer[:]
    graph.initializer.extend(kept + list(part.graph.initializer))
    onnx.checker.check_model(model)
    return model
