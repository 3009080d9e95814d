"""Procedural textures (numpy/OpenCV): boards of several styles, tables, scoresheets.

All textures are sRGB uint8 HxWx3 images.
"""
from __future__ import annotations

import cv2
import numpy as np

BOARD_STYLES = ("wood", "vinyl_green", "vinyl_brown", "vinyl_blue", "rollup_green",
                "rollup_brown", "wood_inlay", "print_grey")


def fbm(rng, h, w, octaves=5, base=4, persistence=0.5):
    """Fractal value noise in [0,1]."""
    out = np.zeros((h, w), np.float32)
    amp, tot = 1.0, 0.0
    for o in range(octaves):
        n = base * 2 ** o
        small = rng.random((n + 1, n + 1)).astype(np.float32)
        out += amp * cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)
        tot += amp
        amp *= persistence
    out /= tot
    return np.clip((out - out.min()) / (np.ptp(out) + 1e-6), 0, 1)


def wood(rng, h, w, c0, c1, angle=0.0, rings=18.0):
    """Wood grain: stretched noise + ring bands. c0 light, c1 dark (rgb 0..1)."""
    big = int(max(h, w) * 1.42) // 16 * 16
    n = fbm(rng, big // 16, big // 4, octaves=4, base=3)
    n = cv2.resize(n, (big, big), interpolation=cv2.INTER_LINEAR)
    y = np.linspace(0, 1, big, dtype=np.float32)[:, None]
    g = np.sin((y * rings + n * 3.0) * 2 * np.pi) * 0.5 + 0.5
    fine = cv2.resize(rng.random((big, big // 16)).astype(np.float32), (big, big))
    t = np.clip(0.65 * g ** 2 + 0.35 * fine, 0, 1)
    M = cv2.getRotationMatrix2D((big / 2, big / 2), np.degrees(angle), 1.0)
    t = cv2.warpAffine(t, M, (big, big), borderMode=cv2.BORDER_REFLECT)
    o = (big - h) // 2, (big - w) // 2
    t = t[o[0]:o[0] + h, o[1]:o[1] + w]
    c0, c1 = np.array(c0, np.float32), np.array(c1, np.float32)
    return c0 * (1 - t[..., None]) + c1 * t[..., None]


def _to_u8(img):
    return (np.clip(img, 0, 1) * 255 + 0.5).astype(np.uint8)


def board_texture(rng: np.random.Generator, style: str, coords: bool, res: int = 1024,
                  border_frac: float = 0.07, white_bottom: bool = True):
    """Board albedo, square, covering the border and the 8x8 playing area.

    Returns (image uint8, playing-area fraction inset: the playing area spans
    [border_frac, 1-border_frac] of the texture in both axes). Texture row 0 is the far edge
    (rank 8 side when white_bottom).
    """
    R = res
    b = int(round(border_frac * R))
    sq = (R - 2 * b) / 8.0
    jit = lambda c, s=0.04: np.clip(np.array(c) * (1 + rng.uniform(-s, s, 3)), 0, 1)  # noqa: E731
    if style in ("wood", "wood_inlay"):
        light = jit(rng.choice([(0.85, 0.70, 0.50), (0.88, 0.76, 0.55), (0.80, 0.62, 0.40)]))
        dark = jit(rng.choice([(0.42, 0.24, 0.12), (0.30, 0.17, 0.09), (0.52, 0.30, 0.15)]))
        A = wood(rng, R, R, light, light * 0.82, angle=rng.uniform(0, np.pi), rings=rng.uniform(10, 30))
        D = wood(rng, R, R, dark, dark * 0.7, angle=rng.uniform(0, np.pi), rings=rng.uniform(10, 30))
        frame = wood(rng, R, R, dark * 1.1, dark * 0.6, angle=0.0, rings=rng.uniform(5, 12))
        text_col = np.array([0.9, 0.8, 0.6])
    else:
        pal = {
            "vinyl_green": ((0.93, 0.93, 0.86), (0.30, 0.50, 0.30), (0.95, 0.95, 0.92)),
            "rollup_green": ((0.92, 0.93, 0.85), (0.26, 0.46, 0.28), (0.93, 0.93, 0.88)),
            "vinyl_brown": ((0.93, 0.87, 0.72), (0.50, 0.30, 0.16), (0.92, 0.88, 0.78)),
            "rollup_brown": ((0.90, 0.84, 0.68), (0.45, 0.27, 0.14), (0.90, 0.86, 0.76)),
            "vinyl_blue": ((0.93, 0.93, 0.90), (0.28, 0.38, 0.55), (0.94, 0.94, 0.92)),
            "print_grey": ((0.90, 0.90, 0.88), (0.45, 0.45, 0.45), (0.96, 0.96, 0.96)),
        }[style]
        light, dark, border = (jit(c) for c in pal)
        tex = fbm(rng, R // 4, R // 4, octaves=3)
        tex = cv2.resize(tex, (R, R))[..., None] * 0.06 - 0.03
        A = np.broadcast_to(light, (R, R, 3)) + tex
        D = np.broadcast_to(dark, (R, R, 3)) + tex
        frame = np.broadcast_to(border, (R, R, 3)) + tex
        text_col = dark * 0.8
    ar = np.arange(R)
    fi = np.floor((ar - b) / sq)
    ok = (fi >= 0) & (fi < 8)
    inside = (ok[None, :] & ok[:, None])[..., None]
    light_sq = (((fi[None, :] + fi[:, None]) % 2) == 0)[..., None]  # a8 (top-left) is light
    img = np.where(inside, np.where(light_sq, A, D), frame)
    out = _to_u8(img)
    if style == "wood_inlay" or rng.random() < 0.5:  # thin line around the playing area
        c = tuple(int(v) for v in _to_u8(text_col))
        t = max(1, R // 400)
        cv2.rectangle(out, (b - 3 * t, b - 3 * t), (R - b + 3 * t, R - b + 3 * t), c, t)
    if coords and b > R * 0.025:
        c = tuple(int(v) for v in _to_u8(text_col))
        fs = b / 40.0 * rng.uniform(0.5, 0.75)
        th = max(1, int(fs * 2))
        files = "abcdefgh" if white_bottom else "hgfedcba"
        ranks = "87654321" if white_bottom else "12345678"
        for i in range(8):
            cx = int(b + (i + 0.5) * sq)
            for (x, y, ch) in ((cx, R - b // 2, files[i]), (cx, b // 2, files[i]),
                               (b // 2, cx, ranks[i]), (R - b // 2, cx, ranks[i])):
                (tw, tht), _ = cv2.getTextSize(ch, cv2.FONT_HERSHEY_SIMPLEX, fs, th)
                cv2.putText(out, ch, (x - tw // 2, y + tht // 2), cv2.FONT_HERSHEY_SIMPLEX, fs, c, th,
                            cv2.LINE_AA)
    if style.startswith("rollup"):  # fold creases: two faint lines through the middle
        for k in (R // 2,):
            s = rng.uniform(0.9, 0.97)
            out[k - 2:k + 2, :] = (out[k - 2:k + 2, :] * s).astype(np.uint8)
            out[:, k - 2:k + 2] = (out[:, k - 2:k + 2] * s).astype(np.uint8)
    return out


TABLE_STYLES = ("wood", "cloth_green", "cloth_white", "laminate_grey", "dark", "formica_beige")


def table_texture(rng, style, res=512):
    R = res
    if style == "wood":
        c = np.array(rng.choice([(0.55, 0.38, 0.22), (0.70, 0.55, 0.38), (0.35, 0.22, 0.13)]))
        img = wood(rng, R, R, c, c * 0.75, angle=rng.uniform(0, np.pi), rings=rng.uniform(6, 14))
    else:
        base = {"cloth_green": (0.10, 0.32, 0.16), "cloth_white": (0.85, 0.85, 0.82),
                "laminate_grey": (0.55, 0.55, 0.55), "dark": (0.12, 0.12, 0.13),
                "formica_beige": (0.80, 0.74, 0.62)}[style]
        n = fbm(rng, R, R, octaves=5, base=8)
        fine = rng.random((R, R)).astype(np.float32)
        img = np.array(base) * (0.9 + 0.15 * n[..., None] + 0.05 * fine[..., None])
    return _to_u8(img)


def scoresheet_texture(rng, res=(384, 512)):
    h, w = res[1], res[0]
    img = np.full((h, w, 3), 240, np.uint8)
    img[:] = (np.array([240, 238, 230]) * rng.uniform(0.9, 1.0)).astype(np.uint8)
    for y in range(60, h - 20, 16):
        cv2.line(img, (15, y), (w - 15, y), (150, 150, 150), 1)
    cv2.line(img, (w // 2, 60), (w // 2, h - 20), (120, 120, 120), 1)
    cv2.rectangle(img, (15, 15), (w - 15, 50), (90, 90, 90), 1)
    # scribbles for written moves
    for y in range(60, int(60 + 16 * rng.integers(3, 25)), 16):
        if y > h - 36:
            break
        for x0 in (30, w // 2 + 15):
            pts = np.cumsum(rng.normal(0, 2.5, (12, 2)), 0) + [x0, y + 8]
            pts[:, 0] = x0 + np.linspace(0, rng.uniform(40, 90), 12)
            cv2.polylines(img, [pts.astype(np.int32)], False, (40, 40, 110), 1, cv2.LINE_AA)
    return img
