#!/usr/bin/env bash
# Trains the board model: renders the training frames of each seed (resumable), builds the cache
# (the renders + the real photos of ../shared/data, a third held out), trains, exports ONNX.
#   training/train.sh [SEED...]         # default seed 2: reproduces models/board.onnx, about 20
#                                       # minutes of rendering on two cores, 70 of training
#   DEVICE=cuda JOBS=16 FRAMES=12000 training/train.sh 2 3     # on a GPU machine: more renders
# Several seeds are rendered and trained on together; the first one seeds the training.
# Environment:
#   DATA    where frames and the cache go (default ../data beside the checkout)
#   DEVICE  cpu, or cuda where there is a GPU
#   FRAMES  frames of each seed (default 3000, what the shipped model saw). A frame already
#           rendered is kept, so a larger FRAMES adds to the set rather than starting it again
#   JOBS    render processes side by side, one a core (default 2)
#   STEPS   training steps of 24 examples (default 3000)
#   INIT    an exported model to start from (e.g. ../models/board.onnx): every layer is trained
#           on, at a learning rate of LR (default 1e-3 from INIT, 3e-3 from scratch)
#   OUT     the model to write (default ../models/board.onnx, with its .train.json beside it)
set -euo pipefail
cd "$(dirname "$0")"
seeds=("${@:-2}")
data="${DATA:-$(cd .. && pwd)/../data}"
frames="${FRAMES:-3000}"
jobs="${JOBS:-2}"
./setup.sh
.venv/bin/pip install -q -r requirements-train.txt
mkdir -p "$data"

dirs=()
chunk=$(((frames + jobs - 1) / jobs))
for seed in "${seeds[@]}"; do
  dir="$data/tm-frames-seed$seed"
  dirs+=("$dir")
  pids=() logs=()
  for ((j = 0; j * chunk < frames; j++)); do
    start=$((j * chunk))
    count=$((frames - start < chunk ? frames - start : chunk))
    echo "rendering seed $seed, frames $start to $((start + count - 1)) (log: $dir.$j.log)"
    PYOPENGL_PLATFORM=egl .venv/bin/python -m render.frames --seed "$seed" --start "$start" --count "$count" --out "$dir" >"$dir.$j.log" 2>&1 &
    pids+=($!) logs+=("$dir.$j.log")
  done
  for j in "${!pids[@]}"; do
    wait "${pids[$j]}" || { echo "rendering failed: see ${logs[$j]}" >&2; exit 1; }
  done
done

cache="$data/cache-seed$(IFS=-; echo "${seeds[*]}")"
.venv/bin/python -m board_model.cache --frames "${dirs[@]}" --real ../../shared/data --out "$cache"

init=()
lr=3e-3
if [ -n "${INIT:-}" ]; then
  .venv/bin/python -m board_model.from_onnx "$INIT" "$cache/init.pt" --width 1.25 --cache "$cache"
  init=(--init "$cache/init.pt")
  lr=1e-3
fi
.venv/bin/python -m board_model.train --cache "$cache" --out "${OUT:-../models/board.onnx}" --seed "${seeds[0]}" \
  --steps "${STEPS:-3000}" --width 1.25 --lr "${LR:-$lr}" --real-fraction 0.4 --device "${DEVICE:-cpu}" "${init[@]}"
