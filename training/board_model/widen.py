"""Widens an exported board model's inner convolutions to multiples of 16 channels, with
filters of zeros, so ONNX Runtime's blocked (NCHWc) CPU kernels take every layer.

A layer of 30 or 40 channels (the net's width 1.25) falls back to ONNX Runtime's plain NCHW
convolution, with layout reorders around it: the stride-2 depthwise layer at 216 x 216 alone took
1.65 of 8.4 ms. The added channels carry zeros from end to end (zero filter, zero bias, ReLU(0)
= 0, and the next layer's weights on them are zero), so every output is unchanged; `widen`
checks that on random boards before it returns. The output heads keep their channel counts.

    python -m board_model.widen IN.onnx OUT.onnx
"""

import argparse
import sys

import numpy as np
import onnx
from onnx import numpy_helper

BLOCK = 16

# Operators that keep channel i of their inputs in channel i of their output.
CHANNELWISE = {"Relu", "Add", "Sigmoid", "Clip", "Mul"}


def _up(c):
    return -(-c // BLOCK) * BLOCK


def _attr(node, name):
    return next((a for a in node.attribute if a.name == name), None)


def widen(model):
    """A copy of `model` whose inner convolutions have multiples of `BLOCK` channels."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    widths = {}  # tensor -> channel count after widening, where it changed
    for node in graph.node:  # nodes are in topological order
        if node.op_type == "Conv":
            _widen_conv(node, inits, widths)
        elif node.op_type in CHANNELWISE:
            wide = [widths[i] for i in node.input if i in widths]
            if wide:
                widths[node.output[0]] = max(wide)
        elif any(i in widths for i in node.input):
            if node.op_type != "Slice" or not _slice_keeps_channels(node, inits, graph):
                raise ValueError(f"{node.name} ({node.op_type}) reads a widened tensor and is not channel-wise")
            widths[node.output[0]] = widths[node.input[0]]
    del graph.value_info[:]  # shapes inferred at export no longer hold
    onnx.checker.check_model(model)
    return model


def _widen_conv(node, inits, widths):
    weight = numpy_helper.to_array(inits[node.input[1]])
    bias = numpy_helper.to_array(inits[node.input[2]]) if len(node.input) > 2 else np.zeros(weight.shape[0], weight.dtype)
    out_c, in_per_group = weight.shape[:2]
    group = _attr(node, "group")
    depthwise = group is not None and group.i > 1
    in_c = widths.get(node.input[0])
    if depthwise:
        if in_per_group != 1 or group.i != out_c:
            raise ValueError(f"{node.name}: grouped convolution that is not depthwise")
        new_out = in_c or out_c
        new_w = np.zeros((new_out, 1) + weight.shape[2:], weight.dtype)
        group.i = new_out
    else:
        # A head (fewer channels than a block) is an output: it keeps its channels.
        new_out = out_c if out_c < BLOCK else _up(out_c)
        new_w = np.zeros((new_out, in_c or in_per_group) + weight.shape[2:], weight.dtype)
    new_w[:out_c, :in_per_group] = weight
    new_b = np.zeros(new_out, bias.dtype)
    new_b[:out_c] = bias
    inits[node.input[1]].CopyFrom(numpy_helper.from_array(new_w, node.input[1]))
    if len(node.input) > 2:
        inits[node.input[2]].CopyFrom(numpy_helper.from_array(new_b, node.input[2]))
    elif new_out != out_c:
        raise ValueError(f"{node.name}: a widened convolution needs a bias input")
    if new_out != out_c:
        widths[node.output[0]] = new_out


def _slice_keeps_channels(node, inits, graph):
    """Whether a Slice cuts only the spatial axes (2 and 3) of an NCHW tensor."""
    consts = {n.output[0]: numpy_helper.to_array(_attr(n, "value").t) for n in graph.node if n.op_type == "Constant"}
    value = lambda name: numpy_helper.to_array(inits[name]) if name in inits else consts.get(name)
    if len(node.input) > 3 and node.input[3]:
        axes = value(node.input[3])
        return axes is not None and all(int(a) in (2, 3, -1, -2) for a in np.atleast_1d(axes))
    starts, ends = value(node.input[1]), value(node.input[2])
    if starts is None or ends is None:
        return False
    # without axes, axis k is sliced by entry k: the channel axis (1) must be taken whole
    return len(starts) < 2 or (starts[1] == 0 and ends[1] >= np.iinfo(np.int32).max)


def check_same(original, widened, boards=3, seed=0):
    """Runs both models on random boards; raises if any output differs by more than float
    rounding (1e-5 of the output's largest magnitude, at least 1e-5)."""
    import onnxruntime as ort

    side = original.graph.input[0].type.tensor_type.shape.dim[1].dim_value
    rng = np.random.default_rng(seed)
    a = ort.InferenceSession(original.SerializeToString(), providers=["CPUExecutionProvider"])
    b = ort.InferenceSession(widened.SerializeToString(), providers=["CPUExecutionProvider"])
    for _ in range(boards):
        board = rng.integers(0, 256, (1, side, side, 3), dtype=np.uint8)
        for name, x, y in zip([o.name for o in a.get_outputs()], a.run(None, {"board": board}), b.run(None, {"board": board})):
            if x.shape != y.shape or np.abs(x - y).max() > 1e-5 * max(1.0, float(np.abs(x).max())):
                raise ValueError(f"widening changed output {name}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input")
    p.add_argument("output")
    a = p.parse_args()
    original = onnx.load(a.input)
    widened = widen(original)
    check_same(original, widened)
    onnx.save(widened, a.output)
    convs = [n for n in widened.graph.node if n.op_type == "Conv"]
    print(f"{a.output}: {len(convs)} convolutions, outputs unchanged", file=sys.stderr)


if __name__ == "__main__":
    main()
