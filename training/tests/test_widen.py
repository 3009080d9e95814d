"""Widening a model's channels for ONNX Runtime's blocked kernels leaves its outputs alone."""

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from board_model.widen import BLOCK, check_same, widen

MODEL = Path(__file__).resolve().parents[2] / "models" / "board.onnx"


def _tiny(rng):
    """uint8 NHWC board -> conv 3->30 (stride 2) -> depthwise 30 -> pointwise 30->40 -> residual
    depthwise/pointwise 40 -> head of 13: the shapes of the board net's stem."""
    inits, nodes = [], []

    def conv(name, x, cin, cout, group=1, stride=1, k=3):
        w = rng.normal(0, 0.3, (cout, cin // group, k, k)).astype(np.float32)
        b = rng.normal(0, 0.1, cout).astype(np.float32)
        inits.extend([numpy_helper.from_array(w, name + ".w"), numpy_helper.from_array(b, name + ".b")])
        nodes.append(helper.make_node("Conv", [x, name + ".w", name + ".b"], [name], group=group, strides=[stride, stride], pads=[k // 2] * 4))
        nodes.append(helper.make_node("Relu", [name], [name + ".r"]))
        return name + ".r"

    nodes.append(helper.make_node("Transpose", ["board"], ["t"], perm=[0, 3, 1, 2]))
    nodes.append(helper.make_node("Cast", ["t"], ["x"], to=TensorProto.FLOAT))
    x = conv("stem", "x", 3, 30, stride=2)
    x = conv("dw1", x, 30, 30, group=30)
    x = conv("pw1", x, 30, 40, k=1)
    y = conv("dw2", x, 40, 40, group=40)
    y = conv("pw2", y, 40, 40, k=1)
    nodes.append(helper.make_node("Add", [x, y], ["sum"]))
    head = rng.normal(0, 0.3, (13, 40, 1, 1)).astype(np.float32)
    inits.extend([numpy_helper.from_array(head, "head.w"), numpy_helper.from_array(np.zeros(13, np.float32), "head.b")])
    nodes.append(helper.make_node("Conv", ["sum", "head.w", "head.b"], ["pieces"]))
    graph = helper.make_graph(
        nodes, "tiny",
        [helper.make_tensor_value_info("board", TensorProto.UINT8, [1, 36, 36, 3])],
        [helper.make_tensor_value_info("pieces", TensorProto.FLOAT, [1, 13, 18, 18])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def _conv_widths(model):
    inits = {i.name: i for i in model.graph.initializer}
    return [tuple(inits[n.input[1]].dims[:2]) for n in model.graph.node if n.op_type == "Conv"]


def test_widening_pads_inner_layers_and_keeps_outputs():
    model = _tiny(np.random.default_rng(1))
    wide = widen(model)
    assert _conv_widths(model) == [(30, 3), (30, 1), (40, 30), (40, 1), (40, 40), (13, 40)]
    assert _conv_widths(wide) == [(32, 3), (32, 1), (48, 32), (48, 1), (48, 48), (13, 48)]
    check_same(model, wide, boards=5)


def test_a_change_to_the_outputs_is_caught():
    model = _tiny(np.random.default_rng(2))
    wide = widen(model)
    w = next(i for i in wide.graph.initializer if i.name == "pw1.w")
    values = numpy_helper.to_array(w).copy()
    values[40:, :30] = 1.0  # the padding no longer carries zeros into the residual sum...
    w.CopyFrom(numpy_helper.from_array(values, "pw1.w"))
    head = next(i for i in wide.graph.initializer if i.name == "head.w")
    h = numpy_helper.to_array(head).copy()
    h[:, 40:] = 1.0  # ...and the head reads them
    head.CopyFrom(numpy_helper.from_array(h, "head.w"))
    try:
        check_same(model, wide)
    except ValueError as e:
        assert "pieces" in str(e)
    else:
        raise AssertionError("a changed output went unnoticed")


def test_the_shipped_model_is_widened():
    model = onnx.load(str(MODEL))
    for out_c, in_c in _conv_widths(model):
        assert out_c % BLOCK == 0 or out_c < BLOCK, (out_c, in_c)
