#!/usr/bin/env bash
# Fine-tunes the piece head of an exported board model on fresh renders and the real photos:
#   training/finetune.sh BASE.onnx OUT.onnx [SEED]     # default seed 2; about 25 minutes on 2 CPUs
# BASE's weights are loaded back into the network (board_model/from_onnx.py: folded batch norms
# restored, checked against ONNX Runtime). Only the piece head (the 1 x 1 layer on the features)
# is trained, 1,200 steps on 1,200 frames of render seed SEED and the real photos (held-out ones
# never); cover, contact and the hand maps stay as BASE computes them. On the shipped model, with
# render seed 3, it read held-out renders and photos no better (training/README.md).
# Environment: DATA (frames and the cache; default ../data beside the checkout), DEVICE.
set -euo pipefail
base="$(realpath "$1")"
out="$(realpath -m "$2")"
seed="${3:-2}"
cd "$(dirname "$0")"
data="${DATA:-$(cd .. && pwd)/../data}"
./setup.sh
.venv/bin/pip install -q -r requirements-train.txt
mkdir -p "$data"
frames="$data/tm-frames-seed$seed"
# two chunks, one process a core; a frame already rendered is skipped
PYOPENGL_PLATFORM=egl .venv/bin/python -m render.frames --seed "$seed" --start 0 --count 600 --out "$frames" &
first=$!
PYOPENGL_PLATFORM=egl .venv/bin/python -m render.frames --seed "$seed" --start 600 --count 600 --out "$frames"
wait "$first"
.venv/bin/python -m board_model.cache --frames "$frames" --real ../../shared/data --out "$data/cache-seed$seed"
.venv/bin/python -m board_model.from_onnx "$base" "$data/base-seed$seed.pt" --width 1.25 --cache "$data/cache-seed$seed"
.venv/bin/python -m board_model.train --cache "$data/cache-seed$seed" --out "$out" --init "$data/base-seed$seed.pt" --seed "$seed" \
  --train-only pieces --steps 1200 --width 1.25 --lr 3e-3 --real-fraction 0.4 --minutes 50 --device "${DEVICE:-cpu}"
