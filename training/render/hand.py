"""Posable hand (MIT generic-hand GLB) with our own forward kinematics, plus forearm and sleeve.

The GLB's 25 joints are all siblings (no hierarchy). We rebuild the chain from the WebXR joint
names (wrist -> metacarpal -> proximal -> intermediate -> distal -> tip), take each joint's bind
pose from the inverse bind matrices, and pose the hand with local rotations about each joint's
local X axis (flexion; -Z points along the bone, +Y is dorsal in WebXR convention) and local Y
(spread). Skinning is plain linear blend skinning in numpy.
"""
from __future__ import annotations

import functools
import json
import struct

import numpy as np
import trimesh

from .assets import shared_dir

FINGERS = ("thumb", "index-finger", "middle-finger", "ring-finger", "pinky-finger")
SEGS = {"thumb": ["metacarpal", "phalanx-proximal", "phalanx-distal", "tip"]}
for _f in FINGERS[1:]:
    SEGS[_f] = ["metacarpal", "phalanx-proximal", "phalanx-intermediate", "phalanx-distal", "tip"]

_CTYPE = {5126: np.float32, 5123: np.uint16, 5121: np.uint8, 5125: np.uint32}
_NCOMP = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT4": 16}


def _read_glb(path):
    b = open(path, "rb").read()
    n = struct.unpack("<I", b[12:16])[0]
    js = json.loads(b[20:20 + n])
    off = 20 + n
    bl = struct.unpack("<I", b[off:off + 4])[0]
    binary = b[off + 8:off + 8 + bl]

    def acc(i):
        a = js["accessors"][i]
        bv = js["bufferViews"][a["bufferView"]]
        o = bv.get("byteOffset", 0) + a.get("byteOffset", 0)
        dt = _CTYPE[a["componentType"]]
        nc = _NCOMP[a["type"]]
        arr = np.frombuffer(binary, dtype=dt, count=a["count"] * nc, offset=o)
        return arr.reshape(a["count"], nc) if nc > 1 else arr
    return js, acc


def _rot(axis, ang):
    return trimesh.transformations.rotation_matrix(ang, axis)


class HandModel:
    """One side's hand mesh with FK. Coordinates in metres (the GLB's own units)."""

    def __init__(self, side: str):
        assert side in ("left", "right")
        self.side = side
        js, acc = _read_glb(shared_dir() / "assets/hand-mesh-mit/generic-hand" / f"{side}.glb")
        prim = js["meshes"][0]["primitives"][0]
        self.verts = acc(prim["attributes"]["POSITION"]).astype(np.float64)
        self.faces = acc(prim["indices"]).astype(np.int64).reshape(-1, 3)
        self.joints_idx = acc(prim["attributes"]["JOINTS_0"]).astype(np.int64)
        self.weights = acc(prim["attributes"]["WEIGHTS_0"]).astype(np.float64)
        self.weights /= self.weights.sum(1, keepdims=True)
        skin = js["skins"][0]
        self.names = [js["nodes"][i]["name"] for i in skin["joints"]]
        ibm = acc(skin["inverseBindMatrices"]).reshape(-1, 4, 4).transpose(0, 2, 1).astype(np.float64)
        self.ibm = ibm
        self.bind = np.linalg.inv(ibm)
        self.index = {n: i for i, n in enumerate(self.names)}
        self.parent = {}
        for f in FINGERS:
            prev = "wrist"
            for s in SEGS[f]:
                name = f"{f}-{s}"
                self.parent[name] = prev
                prev = name
        self.order = ["wrist"] + [f"{f}-{s}" for f in FINGERS for s in SEGS[f]]
        self.local_bind = {}
        for n in self.order[1:]:
            p = self.parent[n]
            self.local_bind[n] = np.linalg.inv(self.bind[self.index[p]]) @ self.bind[self.index[n]]
        # canonical frame: forward (wrist -> middle knuckle), dorsal, side
        J = self.bind[:, :3, 3]
        w = J[self.index["wrist"]]
        f = J[self.index["middle-finger-phalanx-proximal"]] - w
        f /= np.linalg.norm(f)
        lat = J[self.index["index-finger-phalanx-proximal"]] - J[self.index["pinky-finger-phalanx-proximal"]]
        palm = np.cross(f, lat)
        palm = -palm if side == "right" else palm
        palm -= f * (palm @ f)
        palm /= np.linalg.norm(palm)
        dorsal = -palm
        s = np.cross(f, dorsal)
        # C maps canonical coords (x = side, y = forward, z = dorsal) -> mesh coords
        C = np.eye(4)
        C[:3, 0], C[:3, 1], C[:3, 2], C[:3, 3] = s, f, dorsal, w
        self.canon = C
        self.canon_inv = np.linalg.inv(C)

    # ------------------------------------------------------------------------------------
    def joint_globals(self, pose: dict) -> np.ndarray:
        """pose: {joint name: (flex, spread)} radians. Returns (25,4,4) joint transforms."""
        G = np.zeros_like(self.bind)
        G[self.index["wrist"]] = self.bind[self.index["wrist"]]
        sgn = 1.0 if self.side == "right" else -1.0
        for n in self.order[1:]:
            flex, spread = pose.get(n, (0.0, 0.0))
            R = _rot([1, 0, 0], -flex) @ _rot([0, 1, 0], sgn * spread)
            G[self.index[n]] = G[self.index[self.parent[n]]] @ self.local_bind[n] @ R
        return G

    def skin(self, pose: dict) -> tuple[np.ndarray, np.ndarray]:
        """Posed vertices (mesh frame) and joint positions."""
        G = self.joint_globals(pose)
        S = G @ self.ibm  # (25,4,4)
        vh = np.c_[self.verts, np.ones(len(self.verts))]
        M = np.einsum("vk,vkij->vij", self.weights, S[self.joints_idx])
        v = np.einsum("vij,vj->vi", M, vh)[:, :3]
        return v, G[:, :3, 3]


@functools.lru_cache(maxsize=2)
def hand_model(side: str) -> HandModel:
    return HandModel(side)


# ---------------------------------------------------------------------------------------------
# poses: per finger curl per joint (flex) and spread, blended
# ---------------------------------------------------------------------------------------------
def _finger(pose, f, flexes, spread=0.0):
    for s, fl in zip(SEGS[f], flexes):
        pose[f"{f}-{s}"] = (fl, spread if s.endswith("proximal") else 0.0)


def make_pose(kind: str, amount: float = 1.0, rng: np.random.Generator | None = None) -> dict:
    """Named poses. amount in [0,1]: closure (0 = open version of this pose)."""
    r = (lambda s: rng.normal(0, s)) if rng is not None else (lambda s: 0.0)  # noqa: E731
    a = float(np.clip(amount, 0, 1))
    pose = {}
    if kind in ("relaxed", "open", "rest", "hover"):
        c = {"open": 0.1, "relaxed": 0.45, "rest": 0.7, "hover": 0.35}[kind]
        for i, f in enumerate(FINGERS[1:]):
            k = c * (1 + 0.25 * i)
            _finger(pose, f, [0, 0.5 * k + r(0.08), 0.6 * k + r(0.08), 0.4 * k, 0], 0.05 * (i - 1.5) + r(0.03))
        _finger(pose, "thumb", [0.1 + r(0.05), 0.2 * c + r(0.05), 0.2 * c, 0])
    elif kind == "pinch":  # thumb-index(-middle) precision grip: the way pieces are lifted
        for i, f in enumerate(FINGERS[1:]):
            if i < 2:
                k = 0.25 + 0.55 * a
                _finger(pose, f, [0, 0.9 * k + r(0.05), 0.8 * k, 0.3 * k, 0], 0.04 * (i - 1))
            else:
                k = 0.9 + r(0.1)
                _finger(pose, f, [0, 1.0 * k, 1.1 * k, 0.6 * k, 0], 0.05 * i)
        _finger(pose, "thumb", [0.15 + 0.25 * a, 0.25 + 0.25 * a + r(0.05), 0.2 + 0.2 * a, 0], -0.1)
    elif kind == "point":  # index extended to touch / adjust / press
        _finger(pose, "index-finger", [0, 0.15 + 0.2 * a + r(0.05), 0.15 + 0.15 * a, 0.1, 0])
        for i, f in enumerate(FINGERS[2:]):
            k = 0.9 + r(0.1)
            _finger(pose, f, [0, 1.2 * k, 1.2 * k, 0.7 * k, 0], 0.05 * i)
        _finger(pose, "thumb", [0.3, 0.45, 0.3, 0])
    elif kind == "fist":
        for i, f in enumerate(FINGERS[1:]):
            _finger(pose, f, [0, 1.4, 1.4, 0.9, 0])
        _finger(pose, "thumb", [0.4, 0.6, 0.5, 0])
    else:
        raise KeyError(kind)
    return pose


def blend_pose(p0: dict, p1: dict, t: float) -> dict:
    keys = set(p0) | set(p1)
    out = {}
    for k in keys:
        a = np.array(p0.get(k, (0.0, 0.0)))
        b = np.array(p1.get(k, (0.0, 0.0)))
        out[k] = tuple((1 - t) * a + t * b)
    return out


# ---------------------------------------------------------------------------------------------
# placement in the world and the arm
# ---------------------------------------------------------------------------------------------
def hand_world_rotation(heading: float, pitch: float, roll: float) -> np.ndarray:
    """Rotation canonical -> world. heading: direction the fingers point in the XY plane
    (radians, 0 = +Y i.e. from White's side towards Black); pitch: fingers down (positive);
    roll: pronation about the forward axis (0 = palm down)."""
    Rz = _rot([0, 0, 1], -heading)
    Rx = _rot([1, 0, 0], -pitch)
    Ry = _rot([0, 1, 0], roll)
    return Rz @ Rx @ Ry


def anchor_point(kind: str, joints: np.ndarray, model: HandModel) -> np.ndarray:
    ix = model.index
    if kind == "pinch":
        return 0.5 * (joints[ix["thumb-tip"]] + joints[ix["index-finger-tip"]])
    if kind == "point":
        return joints[ix["index-finger-tip"]]
    return joints[ix["middle-finger-phalanx-proximal"]] * 0.5 + joints[ix["wrist"]] * 0.5


def _ellipse_tube(p0, p1, r0, r1, up, n=20, squash=0.75) -> trimesh.Trimesh:
    """Tapered elliptical tube from p0 to p1 (closed ends)."""
    p0, p1 = np.asarray(p0, float), np.asarray(p1, float)
    ax = p1 - p0
    L = np.linalg.norm(ax)
    ax /= L
    u = np.asarray(up, float) - ax * (np.asarray(up, float) @ ax)
    u /= np.linalg.norm(u)
    v = np.cross(ax, u)
    ang = np.linspace(0, 2 * np.pi, n, endpoint=False)
    rings = []
    for p, r in ((p0, r0), (p1, r1)):
        rings.append(p + r * (np.cos(ang)[:, None] * v + squash * np.sin(ang)[:, None] * u))
    V = np.vstack(rings + [p0[None], p1[None]])
    F = []
    for i in range(n):
        j = (i + 1) % n
        F += [[i, j, n + j], [i, n + j, n + i], [2 * n, j, i], [2 * n + 1, n + i, n + j]]
    return trimesh.Trimesh(V, np.array(F), process=False)


class ArmGeometry:
    """World-space meshes of one hand instance: hand, forearm (skin) and sleeve (cloth)."""

    def __init__(self, hand: trimesh.Trimesh, forearm: trimesh.Trimesh | None,
                 sleeve: trimesh.Trimesh | None, joints: np.ndarray, T: np.ndarray):
        self.hand, self.forearm, self.sleeve, self.joints, self.T = hand, forearm, sleeve, joints, T

    def skin_meshes(self):
        return [m for m in (self.hand, self.forearm) if m is not None]

    def all_meshes(self):
        return [m for m in (self.hand, self.forearm, self.sleeve) if m is not None]


def build_arm(side: str, pose: dict, R_world: np.ndarray, anchor_kind: str, target: np.ndarray,
              arm: dict, scale: float = 1.0, T: np.ndarray | None = None) -> ArmGeometry:
    """Pose the hand, rotate it (canonical->world R_world), put its anchor at target, and add
    a forearm going back and up from the wrist, with an optional sleeve.

    arm: {"elev": radians the forearm rises, "len": metres, "sleeve_from": metres from the
    wrist where the sleeve starts (None = bare), "sleeve_r": sleeve radius factor}
    """
    model = hand_model(side)
    v, J = model.skin(pose)
    # mesh -> canonical -> world (rotation) -> scaled
    Cinv = model.canon_inv
    vc = (v @ Cinv[:3, :3].T + Cinv[:3, 3]) * scale
    Jc = (J @ Cinv[:3, :3].T + Cinv[:3, 3]) * scale
    Rw = R_world[:3, :3]
    vw = vc @ Rw.T
    Jw = Jc @ Rw.T
    if T is not None:  # explicit canonical->world transform (rotation part must equal R_world)
        off = np.asarray(T, float)[:3, 3]
    else:
        off = np.asarray(target, float) - anchor_point(anchor_kind, Jw, model)
    vw += off
    Jw += off
    T = np.eye(4)
    T[:3, :3] = Rw
    T[:3, 3] = off
    hand = trimesh.Trimesh(vw, model.faces, process=False)
    # forearm: from slightly inside the wrist, backwards and upwards
    wrist = Jw[model.index["wrist"]]
    fwd = Rw @ np.array([0, 1.0, 0])
    dors = Rw @ np.array([0, 0, 1.0])
    back = -fwd.copy()
    back[2] = 0
    nb = np.linalg.norm(back)
    back = back / nb if nb > 1e-6 else -fwd
    elev = arm.get("elev", 0.25)
    d = np.cos(elev) * back + np.array([0, 0, np.sin(elev)])
    start = wrist + 0.012 * scale * fwd
    r_w = 0.027 * scale * arm.get("thick", 1.0)
    fl = arm.get("forearm", 0.27) * scale
    elbow = start + d * fl
    # upper arm: from the elbow up to the shoulder (given in world coordinates by the caller,
    # otherwise straight on); it leaves the frame towards the player's body
    sh = arm.get("shoulder")
    if sh is not None:
        sh = np.asarray(sh, float)
        # keep the elbow below and in front of the shoulder: never let the upper arm go forwards
        if (sh - elbow)[:2] @ back[:2] < 0.05:
            sh = elbow + back * 0.12 + np.array([0, 0, 0.3])
    else:
        sh = elbow + back * 0.15 + np.array([0, 0, 0.32])
    forearm = trimesh.util.concatenate([
        _ellipse_tube(start, elbow, r_w, r_w * 1.45, dors, squash=0.72),
        _ellipse_tube(elbow - d * 0.01, sh, r_w * 1.4, r_w * 1.7, dors, squash=0.85)])
    sleeve = None
    sf = arm.get("sleeve_from")
    if sf is not None and sf < fl - 0.02:
        k = arm.get("sleeve_r", 1.35)
        s0 = start + d * sf
        r0 = r_w * (1 + 0.45 * sf / fl) * k
        up_dir = (sh - elbow) / np.linalg.norm(sh - elbow)
        sleeve = trimesh.util.concatenate([
            _ellipse_tube(s0, elbow + d * 0.02, r0, r_w * 1.5 * k, dors, squash=0.85),
            _ellipse_tube(elbow - d * 0.015, sh + up_dir * 0.1, r_w * 1.55 * k, r_w * 1.85 * k, dors, squash=0.9)])
    elif sf is None or sf >= fl - 0.02:  # short sleeve: covers the upper arm only
        up_dir = (sh - elbow) / np.linalg.norm(sh - elbow)
        k = arm.get("sleeve_r", 1.35)
        sleeve = _ellipse_tube(elbow + up_dir * 0.08, sh + up_dir * 0.1, r_w * 1.6 * k, r_w * 1.9 * k, dors,
                               squash=0.9)
    return ArmGeometry(hand, forearm, sleeve, Jw, T)


SKIN_TONES = [  # linear-ish albedo, from very light to very dark
    (0.80, 0.60, 0.50), (0.75, 0.55, 0.44), (0.70, 0.50, 0.38), (0.62, 0.43, 0.32),
    (0.55, 0.38, 0.27), (0.45, 0.30, 0.21), (0.35, 0.22, 0.15), (0.25, 0.16, 0.11),
    (0.18, 0.11, 0.08),
]

SLEEVE_COLOURS = [
    (0.05, 0.05, 0.06), (0.12, 0.14, 0.25), (0.55, 0.55, 0.58), (0.80, 0.80, 0.78),
    (0.35, 0.08, 0.07), (0.10, 0.25, 0.12), (0.45, 0.35, 0.22), (0.20, 0.30, 0.55),
    (0.75, 0.65, 0.45), (0.25, 0.25, 0.28),
]
