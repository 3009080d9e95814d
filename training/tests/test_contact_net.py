"""Grafting the contact network into a board model changes its contact output only."""

import numpy as np
import onnx
import pytest

torch = pytest.importorskip("torch")  # requirements-train.txt

from board_model import contact_experiment, contact_net
from board_model.geometry import SIZE
from board_model.net import BoardNet


def _base(path):
    """A board model with the outputs and the old contact convolution of one board_model.train
    exports (random weights)."""
    torch.onnx.export(BoardNet().eval(), (torch.zeros(1, SIZE, SIZE, 3, dtype=torch.uint8),), str(path), opset_version=17, dynamo=False,
                      input_names=["board"], output_names=["pieces", "cover", "contact", "hands"])
    return onnx.load(str(path))


def test_a_grafted_contact_net_gives_its_contact_and_leaves_the_other_outputs_alone(tmp_path):
    torch.manual_seed(0)
    base = _base(tmp_path / "base.onnx")
    net = contact_net.ContactNet().eval()
    grafted = contact_net.graft(base, net)
    assert not contact_experiment.has_contact_conv(grafted)
    boards = np.random.default_rng(0).integers(0, 256, (2, SIZE, SIZE, 3), dtype=np.uint8)
    # Raises unless pieces, cover and hands are bit-identical and contact is the network's.
    contact_net.check(base, grafted, net, boards)


def test_the_check_catches_a_contact_that_is_not_the_networks(tmp_path):
    torch.manual_seed(0)
    base = _base(tmp_path / "base.onnx")
    grafted = contact_net.graft(base, contact_net.ContactNet().eval())
    other = contact_net.ContactNet().eval()
    boards = np.random.default_rng(1).integers(0, 256, (1, SIZE, SIZE, 3), dtype=np.uint8)
    with pytest.raises(SystemExit, match="contact differs"):
        contact_net.check(base, grafted, other, boards)
