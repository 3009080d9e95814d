#!/usr/bin/env bash
# Reproduces models/board.onnx from a seed: renders the training frames (resumable), builds the
# cache (renders + the real photos of ../shared/data, a third held out), trains, exports ONNX.
#   training/train.sh [SEED]            # default seed 2; about 20 minutes of rendering on two
#                                       # cores, 70 minutes of training on them
# Environment: DATA (where frames and the cache go; default ../data beside the checkout),
# DEVICE (cpu, or cuda where there is a GPU).
set -euo pipefail
cd "$(dirname "$0")"
seed="${1:-2}"
data="${DATA:-$(cd .. && pwd)/../data}"
./setup.sh
.venv/bin/pip install -q -r requirements-train.txt
mkdir -p "$data"
# the shipped model saw frames 0-2999 of seed 2 (two render chunks, run side by side on two cores)
PYOPENGL_PLATFORM=egl .venv/bin/python -m render.frames --seed "$seed" --start 0 --count 1500 --out "$data/tm-frames-seed$seed" &
first=$!
PYOPENGL_PLATFORM=egl .venv/bin/python -m render.frames --seed "$seed" --start 1500 --count 1500 --out "$data/tm-frames-seed$seed"
wait "$first"
.venv/bin/python -m board_model.cache --frames "$data/tm-frames-seed$seed" --real ../../shared/data --out "$data/cache-seed$seed"
.venv/bin/python -m board_model.train --cache "$data/cache-seed$seed" --out ../models/board.onnx --seed "$seed" \
  --steps 3000 --width 1.25 --real-fraction 0.4 --device "${DEVICE:-cpu}"
