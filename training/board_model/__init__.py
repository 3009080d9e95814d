"""The board model: data cache, network, training and ONNX export (see models/README.md)."""
