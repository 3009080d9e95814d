"""The `features` output is what the piece head reads: the head's weights applied to it give the
`pieces` output, and the other outputs are untouched."""

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

from board_model.features import add_features

MODEL = Path(__file__).resolve().parents[2] / "models" / "board.onnx"


def run(model, board):
    s = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in s.get_outputs()], s.run(None, {"board": board})))


def test_the_piece_head_on_the_features_gives_the_pieces():
    model = onnx.load(str(MODEL))
    bare = onnx.ModelProto.FromString(model.SerializeToString())
    g = bare.graph  # the shipped model has the output already: take it off
    for o in [o for o in g.output if o.name == "features"]:
        g.output.remove(o)
    for n in [n for n in g.node if n.name.startswith("/features/")]:
        g.node.remove(n)
    for i in [i for i in g.initializer if i.name == "features_shape"]:
        g.initializer.remove(i)
    added = add_features(bare)
    assert add_features(added).SerializeToString() == added.SerializeToString()  # idempotent
    board = np.random.default_rng(3).integers(0, 256, (2, 432, 432, 3), dtype=np.uint8)
    before, after = run(bare, board), run(added, board)
    for name, value in before.items():
        np.testing.assert_array_equal(value, after[name])
    head = next(n for n in added.graph.node if n.op_type == "Conv" and n.name.startswith("/pieces/"))
    inits = {i.name: numpy_helper.to_array(i) for i in added.graph.initializer}
    w, b = inits[head.input[1]][:, :, 0, 0], inits[head.input[2]]
    logits = after["features"] @ w.T + b
    p = np.exp(logits - logits.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    np.testing.assert_allclose(p, after["pieces"], atol=1e-5)
    # A head that is not the model's does not give its pieces.
    assert np.abs(np.roll(p, 1, axis=1) - after["pieces"]).max() > 0.1
