"""Grafting a retrained contact head into the board model changes its contact output only."""

from pathlib import Path

import onnx
import pytest

torch = pytest.importorskip("torch")  # requirements-train.txt

from board_model import contact_experiment, contact_head

ROOT = Path(__file__).resolve().parents[2]


def test_a_grafted_head_gives_its_contact_and_leaves_the_other_outputs_alone():
    torch.manual_seed(0)
    base = onnx.load(ROOT / "models" / "board.onnx")
    head = contact_head.ContactHead(80, 208).eval()
    grafted = contact_head.graft(base, head)
    assert not contact_experiment.has_contact_conv(grafted)
    # Raises unless pieces, cover and hands are bit-identical and contact is the head's.
    contact_head.check(base, grafted, head, ROOT / "fixtures" / "clips" / "adjust-declared")
