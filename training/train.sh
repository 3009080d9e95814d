#!/usr/bin/env bash
# Reproduces models/board.onnx from a seed: renders the training frames (resumable), builds the
# cache (renders + the real photos of ../shared/data, a third held out), trains, exports ONNX.
#   training/train.sh [SEED]            # default seed 1; about 2 CPU hours of training
# Environment: DATA (where frames and the cache go; default ../data beside the checkout),
# DEVICE (cpu, or cuda where there is a GPU).
set -euo pipefail
cd "$(dirname "$0")"
seed="${1:-1}"
data="${DATA:-$(cd .. && pwd)/../data}"
./setup.sh
.venv/bin/pip install -q -r requirements-train.txt
mkdir -p "$data"
# the shipped model saw frames 0-947 and 10000-10688 of seed 1 (two render chunks)
PYOPENGL_PLATFORM=egl .venv/bin/python -m render.frames --seed "$seed" --start 0 --count 948 --out "$data/tm-frames-seed$seed"
PYOPENGL_PLATFORM=egl .venv/bin/python -m render.frames --seed "$seed" --start 10000 --count 689 --out "$data/tm-frames-seed$seed"
.venv/bin/python -m board_model.cache --frames "$data/tm-frames-seed$seed" --real ../../shared/data --out "$data/cache-seed$seed"
.venv/bin/python -m board_model.train --cache "$data/cache-seed$seed" --out ../models/board.onnx --seed "$seed" \
  --steps 3000 --width 1.25 --real-fraction 0.4 --device "${DEVICE:-cpu}"
