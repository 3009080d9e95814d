"""touchmove synthetic data renderer (pyrender on Mesa EGL). See training/README.md."""
import os

os.environ.setdefault("PYOPENGL_PLATFORM", "egl")
