"""Adds the `features` output to an exported board model: per square, the vector the piece head
reads (the input of its 1 x 1 convolution), `[N, 64, C]` in FEN reading order.

touchmove learns a set in front of the camera from a known position (`touchmove calibrate
--fen`) as a small correction on these features, anchored to the shipped head (`src/detect/
adapt.rs`). Every other output is left as it is; the edit is idempotent.

    python -m board_model.features IN.onnx OUT.onnx
"""

import argparse

import onnx
from onnx import TensorProto, helper

OUTPUT = "features"


def add_features(model):
    """A copy of `model` with the `features` output added (unchanged if it has one)."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    graph = model.graph
    if any(o.name == OUTPUT for o in graph.output):
        return model
    head = next(n for n in graph.node if n.op_type == "Conv" and n.name.startswith("/pieces/"))
    inits = {i.name: i for i in graph.initializer}
    channels = inits[head.input[1]].dims[1]
    source = head.input[0]  # [N, C, 8, 8]
    shape = helper.make_tensor("features_shape", TensorProto.INT64, [3], [0, channels, 64])
    graph.initializer.append(shape)
    graph.node.extend([
        helper.make_node("Reshape", [source, "features_shape"], ["features_flat"], name="/features/Reshape"),
        helper.make_node("Transpose", ["features_flat"], [OUTPUT], name="/features/Transpose", perm=[0, 2, 1]),
    ])
    graph.output.append(helper.make_tensor_value_info(OUTPUT, TensorProto.FLOAT, ["batch", 64, channels]))
    onnx.checker.check_model(model)
    return model


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("src")
    p.add_argument("dst")
    a = p.parse_args()
    onnx.save(add_features(onnx.load(a.src)), a.dst)


if __name__ == "__main__":
    main()
