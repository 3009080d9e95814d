#!/usr/bin/env bash
# Sets up the renderer on a fresh Debian 12 machine: system packages (Mesa EGL for headless
# OpenGL, ffmpeg for H.264) and a virtual environment at training/.venv with the pinned
# requirements. Idempotent: re-running only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")"

APT_PKGS=(python3 python3-venv libegl-mesa0 libegl1 libgl1-mesa-dri libgles2 ffmpeg)
missing=()
for p in "${APT_PKGS[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
# only touch pip when the pinned set is not already satisfied
if ! .venv/bin/python - <<'PY' 2>/dev/null
import sys
from importlib.metadata import version, PackageNotFoundError
ok = True
for line in open("requirements.txt"):
    line = line.split("#")[0].strip()
    if not line:
        continue
    name, want = line.split("==")
    try:
        ok &= version(name) == want
    except PackageNotFoundError:
        ok = False
sys.exit(0 if ok else 1)
PY
then
  .venv/bin/pip install -q --upgrade pip
  .venv/bin/pip install -q -r requirements.txt
fi
# headless check: an EGL context must come up
PYOPENGL_PLATFORM=egl .venv/bin/python -c "import pyrender; r = pyrender.OffscreenRenderer(8, 8); r.delete()" \
  && echo "training/.venv ready (pyrender on EGL works)"
