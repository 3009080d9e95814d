"""Piece meshes: the two shared GLB sets and a procedural lathe-turned Staunton set.

World convention used everywhere in this package: metres, Z up, board top at z = 0.
Every piece mesh returned here is Z-up, centred on the Z axis, base at z = 0, and scaled to
"unit square" size (a square of side 1.0); the scene scales it by the square size.
"""
from __future__ import annotations

import functools
import os
from pathlib import Path

import numpy as np
import trimesh
from shapely.geometry import Polygon

KINDS = ("k", "q", "r", "b", "n", "p")
NAMES = {"k": "king", "q": "queen", "r": "rook", "b": "bishop", "n": "knight", "p": "pawn"}

# Height of each piece relative to the square side, following typical tournament sets
# (FIDE Handbook C.02: king 9.5 cm on 5-6.5 cm squares; base diameter 40-50 % of height).
HEIGHT = {"k": 1.60, "q": 1.42, "b": 1.20, "n": 1.05, "r": 0.92, "p": 0.84}
BASE_D = {"k": 0.72, "q": 0.68, "b": 0.62, "n": 0.64, "r": 0.62, "p": 0.54}


def shared_dir() -> Path:
    env = os.environ.get("TOUCHMOVE_SHARED")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[3] / "shared"


def _y_up_to_z_up(m: trimesh.Trimesh) -> trimesh.Trimesh:
    m = m.copy()
    m.apply_transform(trimesh.transformations.rotation_matrix(np.pi / 2, [1, 0, 0]))
    return m


def _normalise(m: trimesh.Trimesh, kind: str) -> trimesh.Trimesh:
    """Centre on the Z axis, base at z=0, scale to the nominal height in square units."""
    m = m.copy()
    lo, hi = m.bounds
    m.apply_translation([-(lo[0] + hi[0]) / 2, -(lo[1] + hi[1]) / 2, -lo[2]])
    h = m.bounds[1][2]
    m.apply_scale(HEIGHT[kind] / h)
    # Then enforce the base diameter within +-15 % of the nominal (some GLBs are squat)
    d = max(m.extents[0], m.extents[1])
    s_xy = np.clip(BASE_D[kind] / d, 0.85, 1.15)
    m.apply_transform(np.diag([s_xy, s_xy, 1.0, 1.0]))
    return m


def _load_glb(path: Path) -> trimesh.Trimesh:
    s = trimesh.load(str(path), force="scene")
    m = s.to_geometry() if hasattr(s, "to_geometry") else s.dump(concatenate=True)
    m = trimesh.Trimesh(vertices=m.vertices, faces=m.faces, process=True)
    return _y_up_to_z_up(m)


# --------------------------------------------------------------------------------------------
# procedural lathe set
# --------------------------------------------------------------------------------------------
def _revolve(profile, sections=40) -> trimesh.Trimesh:
    """profile: list of (r, z) from the bottom centre to the top centre."""
    pts = np.asarray(profile, dtype=float)
    pts[:, 0] = np.maximum(pts[:, 0], 0.0)
    m = trimesh.creation.revolve(pts, sections=sections)
    m.merge_vertices()
    m.fix_normals()
    return m


def _profile(kind: str, rng: np.random.Generator):
    """Staunton-like silhouettes as (r, z), in square units. Small random variation per set."""
    j = lambda a, f=0.06: a * (1 + rng.uniform(-f, f))  # noqa: E731
    base = [(0, 0), (j(0.34), 0), (j(0.345), 0.03), (j(0.33), 0.07), (j(0.29), 0.09),
            (j(0.30), 0.12), (j(0.25), 0.15)]
    if kind == "p":
        return base + [(j(0.16), 0.30), (j(0.12), 0.44), (j(0.19), 0.47), (j(0.19), 0.50),
                       (j(0.10), 0.53), (j(0.16), 0.58), (j(0.18), 0.65), (j(0.15), 0.74),
                       (j(0.09), 0.80), (0, 0.84)]
    if kind == "r":
        return base + [(j(0.22), 0.30), (j(0.20), 0.55), (j(0.23), 0.62), (j(0.26), 0.66),
                       (j(0.26), 0.92), (j(0.19), 0.92), (j(0.19), 0.84), (0, 0.84)]
    if kind == "b":
        return base + [(j(0.16), 0.32), (j(0.11), 0.60), (j(0.20), 0.64), (j(0.20), 0.67),
                       (j(0.10), 0.70), (j(0.15), 0.78), (j(0.18), 0.90), (j(0.15), 1.02),
                       (j(0.08), 1.10), (j(0.05), 1.13), (j(0.05), 1.16), (0, 1.20)]
    if kind == "q":
        return base + [(j(0.18), 0.36), (j(0.12), 0.78), (j(0.23), 0.82), (j(0.23), 0.86),
                       (j(0.13), 0.90), (j(0.16), 1.10), (j(0.23), 1.24), (j(0.21), 1.28),
                       (j(0.12), 1.30), (j(0.07), 1.34), (j(0.06), 1.40), (0, 1.42)]
    if kind == "k":
        return base + [(j(0.19), 0.38), (j(0.13), 0.88), (j(0.24), 0.92), (j(0.24), 0.96),
                       (j(0.14), 1.00), (j(0.17), 1.20), (j(0.24), 1.32), (j(0.20), 1.36),
                       (j(0.08), 1.38), (j(0.05), 1.42), (0, 1.44)]
    if kind == "n":
        return base + [(j(0.26), 0.20), (j(0.27), 0.24), (0, 0.24)]
    raise KeyError(kind)


def _knight_head(rng: np.random.Generator) -> trimesh.Trimesh:
    """Extruded horse-head silhouette (side view in the XZ plane), facing +X."""
    s = 1 + rng.uniform(-0.05, 0.05)
    outline = [(-0.22, 0.22), (0.20, 0.22), (0.16, 0.40), (0.08, 0.52), (0.30, 0.62),
               (0.34, 0.72), (0.28, 0.80), (0.10, 0.90), (0.02, 1.02), (-0.04, 0.95),
               (-0.14, 0.96), (-0.22, 0.86), (-0.26, 0.66), (-0.26, 0.42)]
    poly = Polygon([(x * s, z) for x, z in outline]).buffer(0.02, join_style=1)
    thick = 0.26 * (1 + rng.uniform(-0.1, 0.1))
    m = trimesh.creation.extrude_polygon(poly, thick)
    # extrude_polygon works in XY and extrudes along Z: rotate so the silhouette is in XZ
    m.apply_transform(trimesh.transformations.rotation_matrix(np.pi / 2, [1, 0, 0]))
    m.apply_translation([0, thick / 2, 0])
    return m


def lathe_set(seed: int = 0) -> dict[str, trimesh.Trimesh]:
    rng = np.random.default_rng(seed)
    out = {}
    for k in KINDS:
        m = _revolve(_profile(k, rng))
        if k == "k":  # cross
            a = trimesh.creation.box([0.06, 0.06, 0.22])
            a.apply_translation([0, 0, 1.52])
            b = trimesh.creation.box([0.18, 0.06, 0.06])
            b.apply_translation([0, 0, 1.55])
            m = trimesh.util.concatenate([m, a, b])
        elif k == "n":
            m = trimesh.util.concatenate([m, _knight_head(rng)])
        elif k == "b":  # mitre slit suggestion: a small ball on top
            ball = trimesh.creation.icosphere(subdivisions=2, radius=0.045)
            ball.apply_translation([0, 0, 1.19])
            m = trimesh.util.concatenate([m, ball])
        elif k == "q":  # coronet balls
            parts = [m]
            for a in np.linspace(0, 2 * np.pi, 9)[:-1]:
                ball = trimesh.creation.icosphere(subdivisions=1, radius=0.035)
                ball.apply_translation([0.20 * np.cos(a), 0.20 * np.sin(a), 1.28])
                parts.append(ball)
            m = trimesh.util.concatenate(parts)
        elif k == "r":  # crenellations: cut look via dark boxes is overkill; add merlons
            parts = [m]
            for a in np.linspace(0, 2 * np.pi, 6)[:-1]:
                mer = trimesh.creation.box([0.09, 0.09, 0.07])
                mer.apply_translation([0.22 * np.cos(a), 0.22 * np.sin(a), 0.955])
                parts.append(mer)
            m = trimesh.util.concatenate(parts)
        out[k] = _normalise(m, k)
    return out


@functools.lru_cache(maxsize=8)
def glb_set(name: str) -> dict[str, trimesh.Trimesh]:
    d = shared_dir() / "assets" / name
    out = {}
    for k in KINDS:
        m = _load_glb(d / f"{NAMES[k]}.glb")
        if k == "n":
            # make the knight face +X like the lathe knight (its snout is its longest extent)
            lo, hi = m.bounds
            c = (lo + hi) / 2
            if hi[2] - lo[2] > 0 and (hi[0] - lo[0]) < (hi[1] - lo[1]):
                m.apply_transform(trimesh.transformations.rotation_matrix(np.pi / 2, [0, 0, 1], c))
        out[k] = _normalise(m, k)
    return out


@functools.lru_cache(maxsize=16)
def piece_set(name: str) -> dict[str, trimesh.Trimesh]:
    """'cc0', 'ccby' or 'lathe<N>' (procedural variant N)."""
    if name == "cc0":
        return glb_set("pieces-cc0")
    if name == "ccby":
        return glb_set("pieces-ccby")
    if name.startswith("lathe"):
        return lathe_set(int(name[5:] or 0))
    raise KeyError(name)


PIECE_SETS = ("cc0", "ccby", "lathe0", "lathe1", "lathe2")


@functools.lru_cache(maxsize=64)
def surface_points(set_name: str, kind: str, n: int = 2500) -> np.ndarray:
    """Dense surface samples (unit-square scale) for fast hand-piece distance queries."""
    m = piece_set(set_name)[kind]
    pts, _ = trimesh.sample.sample_surface(m, n, seed=1)
    return np.vstack([pts, m.vertices]).astype(np.float64)


# Colour variants: (name, white rgb, black rgb, roughness range)
PIECE_COLOURS = [
    ("plastic", (0.86, 0.84, 0.78), (0.035, 0.035, 0.04), (0.25, 0.45)),
    ("ivory", (0.90, 0.82, 0.66), (0.05, 0.04, 0.035), (0.3, 0.5)),
    ("boxwood", (0.83, 0.66, 0.42), (0.10, 0.055, 0.03), (0.45, 0.7)),
    ("rosewood", (0.86, 0.72, 0.50), (0.22, 0.07, 0.04), (0.45, 0.7)),
    ("ebony", (0.92, 0.88, 0.80), (0.02, 0.02, 0.02), (0.3, 0.55)),
    ("cream_brown", (0.93, 0.88, 0.74), (0.25, 0.13, 0.06), (0.3, 0.6)),
    ("white_red", (0.92, 0.91, 0.88), (0.45, 0.05, 0.04), (0.3, 0.5)),
]


@functools.lru_cache(maxsize=64)
def surface_tree(set_name: str, kind: str):
    """KD-tree of surface_points in the piece's own (unit-square) frame."""
    from scipy.spatial import cKDTree
    return cKDTree(surface_points(set_name, kind))
