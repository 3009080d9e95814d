"""Camera/sensor effects applied to the rendered image: exposure, white balance, vignetting,
defocus, motion blur (global shake and moving-hand), sensor noise, JPEG/H.264-like compression."""
from __future__ import annotations

import cv2
import numpy as np


def sample_post(rng):
    return {
        "exposure": float(np.exp(rng.normal(0, 0.2))),
        "gamma": float(rng.uniform(0.85, 1.15)),
        "wb": list(np.exp(rng.normal(0, 0.05, 3))),
        "vignette": float(rng.uniform(0, 0.35)),
        "defocus": float(rng.choice([0, 0, 0.6, 1.0, 1.5])),
        "shake": float(rng.choice([0, 0, 0, 2, 4, 7])),
        "shake_angle": float(rng.uniform(0, np.pi)),
        "noise": float(rng.uniform(0.002, 0.03)),
        "jpeg": int(rng.integers(35, 96)),
        "downscale": float(rng.choice([1.0, 1.0, 1.0, 0.75, 0.5])),
        "saturation": float(rng.uniform(0.75, 1.2)),
    }


def line_kernel(length, angle):
    L = max(1, int(round(length)))
    k = np.zeros((L * 2 + 1, L * 2 + 1), np.float32)
    c = L
    dx, dy = np.cos(angle) * L / 2, np.sin(angle) * L / 2
    cv2.line(k, (int(round(c - dx)), int(round(c - dy))), (int(round(c + dx)), int(round(c + dy))), 1.0, 1,
             cv2.LINE_AA)
    return k / k.sum()


def motion_blur_region(img, mask, vec):
    """Blur pixels of a moving object (mask>0) along the pixel motion vec (dx,dy) over one
    exposure, compositing with a blurred matte so edges smear over the background."""
    L = float(np.hypot(*vec))
    if L < 1.5:
        return img
    k = line_kernel(L, np.arctan2(vec[1], vec[0]))
    m = (mask > 0).astype(np.float32)
    # dilate the region of interest so the smear can extend beyond the object
    ys, xs = np.nonzero(m)
    if len(xs) == 0:
        return img
    pad = int(L) + 4
    x0, x1 = max(xs.min() - pad, 0), min(xs.max() + pad + 1, img.shape[1])
    y0, y1 = max(ys.min() - pad, 0), min(ys.max() + pad + 1, img.shape[0])
    sub = img[y0:y1, x0:x1].astype(np.float32)
    ms = m[y0:y1, x0:x1]
    obj = cv2.filter2D(sub * ms[..., None], -1, k)
    a = cv2.filter2D(ms, -1, k)
    out = img.copy().astype(np.float32)
    # smeared object over the (unsmeared) image; where the object was, a little of it remains
    comp = obj + sub * (1 - a[..., None])
    out[y0:y1, x0:x1] = comp
    return np.clip(out, 0, 255).astype(np.uint8)


_R2 = {}


def _r2(H, W):
    if (H, W) not in _R2:
        yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
        _R2[(H, W)] = ((xx - W / 2) ** 2 + (yy - H / 2) ** 2) / ((W / 2) ** 2 + (H / 2) ** 2)
    return _R2[(H, W)]


def apply(img, p, rng, hand_mask=None, hand_motion=None):
    """img uint8 RGB. Returns uint8 RGB (not yet compressed)."""
    out = img
    if hand_mask is not None and hand_motion is not None:
        out = motion_blur_region(out, hand_mask, hand_motion)
    x = out.astype(np.float32) / 255.0
    lin = x ** 2.2
    # auto-exposure like a webcam's: mean luminance to ~0.2 (linear), then the sampled bias;
    # the gain is limited so that at most ~1 % of pixels clip
    Y = lin.mean(2)
    gain = 0.2 / max(float(Y.mean()), 1e-3)
    gain = min(gain, 0.98 / max(float(np.percentile(Y, 99)), 1e-3))
    lin *= gain * p["exposure"] * np.asarray(p["wb"], np.float32)
    H, W = x.shape[:2]
    if p["vignette"] > 0:
        lin *= (1 - p["vignette"] * _r2(H, W))[..., None]
    if p["defocus"] > 0:
        lin = cv2.GaussianBlur(lin, (0, 0), p["defocus"])
    if p["shake"] > 0:
        lin = cv2.filter2D(lin, -1, line_kernel(p["shake"], p["shake_angle"]))
    # sensor noise: shot (signal-dependent) + read noise, in linear space
    n = p["noise"]
    lin = lin + rng.standard_normal(lin.shape, dtype=np.float32) * np.sqrt(np.maximum(lin, 0) * (n * 0.5) + (n * 0.3) ** 2)
    x = np.clip(lin, 0, 1) ** (1 / (2.2 * p["gamma"]))
    if p["saturation"] != 1.0:
        g = x.mean(2, keepdims=True)
        x = np.clip(g + (x - g) * p["saturation"], 0, 1)
    out = (x * 255 + 0.5).astype(np.uint8)
    if p["downscale"] < 1.0:
        small = cv2.resize(out, (int(W * p["downscale"]), int(H * p["downscale"])), interpolation=cv2.INTER_AREA)
        out = cv2.resize(small, (W, H), interpolation=cv2.INTER_LINEAR)
    return out


def jpeg_bytes(img_rgb, quality):
    ok, buf = cv2.imencode(".jpg", cv2.cvtColor(img_rgb, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    assert ok
    return buf.tobytes()
