"""An exported board model loads back into the network: the same outputs as ONNX Runtime's,
and, with its folded batch norms given back their statistics, the same in training mode."""

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")  # requirements-train.txt

from board_model.from_onnx import check, load, module_path  # noqa: E402
from board_model.geometry import SIZE  # noqa: E402

MODEL = Path(__file__).resolve().parents[2] / "models" / "board.onnx"


def test_a_node_name_gives_its_module():
    assert module_path("/stem/stem.0/stem.0.0/Conv") == "stem.0.0"
    assert module_path("/s8/s8.1/dw/dw.0/Conv") == "s8.1.dw.0"
    assert module_path("/pieces/Conv") == "pieces"


def test_the_shipped_model_loads_back_and_trains_from_where_it_was():
    rng = np.random.default_rng(0)
    # boards with structure: a chequer of random greys, noise on top
    chequer = (np.indices((8, 8)).sum(0) % 2).repeat(SIZE // 8 + 1, 0).repeat(SIZE // 8 + 1, 1)[:SIZE, :SIZE]
    boards = np.stack([np.clip(60 + 120 * chequer[..., None] + rng.normal(0, 25, (SIZE, SIZE, 3)), 0, 255) for _ in range(4)]).astype(np.uint8)
    net = load(str(MODEL), 1.25, boards)
    check(net, str(MODEL), boards)  # evaluation mode: ONNX Runtime's outputs
    with torch.no_grad():
        net.eval()
        frozen = net(torch.from_numpy(boards))[0]
        net.train()
        training = net(torch.from_numpy(boards))[0]
    assert (frozen - training).abs().max().item() < 0.02
