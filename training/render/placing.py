"""Putting hands in the scene the way players move: from the shoulder, grasping, touching, hovering.

Grasps and touches are *settled* against the piece's mesh: the grip closes (or the hand
translates) until the closest hand surface is ~1 mm from the piece, so that contact labels come
from real geometry and there is no floating or deeply penetrating hand.
"""
from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

from .hand import build_arm, hand_world_rotation, make_pose, blend_pose
from .scene import BoardScene, HandInst, PieceInst, dense_hand_points, sample_skin, sample_sleeve, sq_xy

SETTLE_M = 0.001


def shoulder(scene: BoardScene, owner: str, side: str, body_x: float = 0.0) -> np.ndarray:
    """Where a player's shoulder is (world XY, Z): White sits at -Y facing +Y (right = +X);
    Black at +Y facing -Y (right = -X)."""
    half = scene.board_total / 2
    facing = 1.0 if owner == "w" else -1.0
    right = np.array([facing, 0.0])
    off = 0.19 if side == "right" else -0.19
    xy = np.array([body_x, -facing * (half + 0.28)]) + right * off
    return np.r_[xy, 0.30]


def heading_to(src_xy, dst_xy):
    d = np.asarray(dst_xy) - np.asarray(src_xy)
    return float(np.arctan2(d[0], d[1]))  # 0 = +Y, positive towards +X


def arm_params(rng, scale=1.0):
    sleeve = None if rng.random() < 0.2 else float(rng.uniform(0.03, 0.18))
    return {"elev": float(rng.uniform(0.05, 0.3)), "forearm": float(rng.uniform(0.24, 0.29)), "sleeve_from": sleeve,
            "sleeve_r": float(rng.uniform(1.2, 1.6)), "thick": float(rng.uniform(0.9, 1.15))}


class HandSpec:
    """Everything needed to rebuild one hand+arm: used for frames and for clip keyframes."""

    def __init__(self, hid, owner, side, skin, sleeve, arm, scale):
        self.hid, self.owner, self.side = hid, owner, side
        self.skin, self.sleeve, self.arm, self.scale = skin, sleeve, arm, scale
        self.shoulder = None  # world position, set by set_body()

    def set_body(self, scene, body_x=0.0, height=None, rng=None):
        sh = shoulder(scene, self.owner, self.side, body_x)
        sh[2] = height if height is not None else (rng.uniform(0.30, 0.42) if rng is not None else 0.36)
        self.shoulder = sh
        return self

    @staticmethod
    def sample(rng, hid, owner):
        side = "right" if rng.random() < 0.78 else "left"
        return HandSpec(hid, owner, side, sample_skin(rng), sample_sleeve(rng), arm_params(rng),
                        float(rng.uniform(0.88, 1.1)))

    def build(self, pose, R, anchor_kind, target, value, arm_override=None, T=None):
        arm = dict(self.arm)
        if self.shoulder is not None:
            arm["shoulder"] = self.shoulder
        if arm_override:
            arm.update(arm_override)
        if T is not None:
            R = T
        g = build_arm(self.side, pose, R, anchor_kind, target, arm, self.scale, T=T)
        return HandInst(self.hid, g, self.skin, self.sleeve, value)


def min_dist(hand: HandInst, pts_tree: cKDTree, cap: float = 0.03) -> float:
    """Closest hand-skin-to-piece distance (capped at `cap`): only hand samples inside the
    piece's bounding box grown by `cap` are queried."""
    pts = dense_hand_points(hand.geom)
    lo, hi = pts_tree.mins - cap, pts_tree.maxes + cap
    pts = pts[np.all((pts > lo) & (pts < hi), axis=1)]
    if len(pts) == 0:
        return cap
    d, _ = pts_tree.query(pts, k=1, distance_upper_bound=cap)
    return float(min(d.min(), cap))


def clearance(scene: BoardScene, hand: HandInst, exclude: set) -> float:
    """Distance from the hand to the nearest piece not in exclude (capped at 5 cm)."""
    d = scene.hand_piece_distances([hand])[hand.hid]
    vals = [v for pid, v in d.items() if pid not in exclude]
    return min(vals) if vals else 0.05


def best_of(fn, scene, exclude, tries, good=0.008):
    """Call fn() up to `tries` times; keep the placement farthest from the other pieces."""
    best, best_c = None, -1.0
    for _ in range(max(1, tries)):
        h, info = fn()
        c = clearance(scene, h, exclude)
        if c > best_c:
            best, best_c = (h, info), c
        if c >= good:
            break
    best[1]["clearance"] = best_c
    return best


def grasp(scene: BoardScene, spec: HandSpec, piece: PieceInst, rng, value: int, body_x=0.0,
          height_frac=None, pitch=None, roll=None, tries=1):
    """Thumb-index pinch around the piece's head. Returns (HandInst, info). With tries > 1,
    the placement that stays clearest of the other pieces is kept."""
    if tries > 1:
        return best_of(lambda: grasp(scene, spec, piece, rng, value, body_x, height_frac, pitch, roll), scene,
                       {piece.id}, tries)
    h = scene.piece_height(piece.letter)
    hf = height_frac if height_frac is not None else rng.uniform(0.55, 0.85)
    T = scene.piece_world_pose(piece)
    c = T[:3, 3]
    up = T[:3, 2] / np.linalg.norm(T[:3, 2])
    if up[2] > 0.9:
        target = np.array([c[0], c[1], c[2] + hf * h])
    else:  # toppled piece: pinch it around its middle
        pts = scene.piece_points_world(piece)
        target = 0.5 * (pts.min(0) + pts.max(0))
    sh = shoulder(scene, spec.owner, spec.side, body_x)
    head = heading_to(sh[:2], target[:2]) + rng.normal(0, 0.15)
    pitch = pitch if pitch is not None else rng.uniform(0.6, 1.15)
    roll = roll if roll is not None else rng.normal(0, 0.25) + (0.25 if spec.side == "right" else -0.25)
    R = hand_world_rotation(head, pitch, roll)
    tree = cKDTree(scene.piece_points_world(piece))
    jitter = rng.normal(0, 0.04, 40)

    def build(a):
        return spec.build(_pinch_pose(a, jitter), R, "pinch", target, value)

    closure = 0.0
    hand = build(closure)
    if min_dist(hand, tree) > SETTLE_M:
        closure = 1.0
        hand_hi = build(closure)
        if min_dist(hand_hi, tree) > SETTLE_M:
            # fingers cannot reach the piece: close fully and translate towards it
            hand = translate_to_contact(scene, spec, lambda off: spec.build(_pinch_pose(1.0, jitter), R, "pinch",
                                                                             target + off, value),
                                        tree, _dir_to(hand_hi, tree))
        else:
            lo, hi = 0.0, 1.0
            for _ in range(9):
                mid = 0.5 * (lo + hi)
                if min_dist(build(mid), tree) > SETTLE_M:
                    lo = mid
                else:
                    hi = mid
            closure = hi
            hand = build(hi)
    return hand, {"mode": "grasp", "R": R, "target": target, "pitch": pitch, "heading": head,
                  "pose": _pinch_pose(closure, jitter), "open_pose": _pinch_pose(0.0, jitter)}


def _pinch_pose(a, jitter):
    p = make_pose("pinch", a)
    # small deterministic per-hand variation
    out = {}
    for i, (k, v) in enumerate(sorted(p.items())):
        out[k] = (v[0] + jitter[i % len(jitter)] * 0.5, v[1])
    return out


def _dir_to(hand: HandInst, tree: cKDTree) -> np.ndarray:
    pts = dense_hand_points(hand.geom)
    d, i = tree.query(pts, k=1)
    j = int(np.argmin(d))
    v = tree.data[i[j]] - pts[j]
    n = np.linalg.norm(v)
    return v / n if n > 0 else np.array([0, 0, -1.0])


def translate_to_contact(scene, spec, build_off, tree, direction, max_travel=0.08):
    """Bisection on a rigid translation along direction until the hand is SETTLE_M away."""
    direction = np.asarray(direction, float) / np.linalg.norm(direction)
    lo, hi = 0.0, max_travel
    if min_dist(build_off(direction * hi), tree) > SETTLE_M:
        return build_off(direction * hi)
    for _ in range(12):
        mid = 0.5 * (lo + hi)
        if min_dist(build_off(direction * mid), tree) > SETTLE_M:
            lo = mid
        else:
            hi = mid
    return build_off(direction * hi)


def touch(scene: BoardScene, spec: HandSpec, piece: PieceInst, rng, value: int, body_x=0.0, top=None, tries=1):
    """Index fingertip on the piece (top, or side of the head). Returns (HandInst, info)."""
    if tries > 1:
        return best_of(lambda: touch(scene, spec, piece, rng, value, body_x, top), scene, {piece.id}, tries)
    h = scene.piece_height(piece.letter)
    c = scene.piece_world_pose(piece)[:3, 3]
    sh = shoulder(scene, spec.owner, spec.side, body_x)
    head = heading_to(sh[:2], c[:2]) + rng.normal(0, 0.15)
    top = top if top is not None else rng.random() < 0.6
    pitch = rng.uniform(0.7, 1.1) if top else rng.uniform(0.25, 0.6)
    R = hand_world_rotation(head, pitch, rng.normal(0, 0.2))
    pose = make_pose("point", rng.uniform(0, 0.6), rng)
    fwd = R[:3, :3] @ np.array([0, 1.0, 0])
    if top:
        start = np.array([c[0], c[1], c[2] + h + 0.03])
        direction = np.array([0, 0, -1.0])
    else:
        start = np.array([c[0], c[1], c[2] + 0.7 * h]) - fwd * 0.04 * np.array([1, 1, 0])
        direction = fwd * np.array([1, 1, 0])
    tree = cKDTree(scene.piece_points_world(piece))
    hand = translate_to_contact(scene, spec, lambda off: spec.build(pose, R, "point", start + off, value),
                                tree, direction, max_travel=0.09)
    return hand, {"mode": "touch", "R": R, "pitch": pitch, "heading": head, "pose": pose}


def hover(scene: BoardScene, spec: HandSpec, xy, rng, value: int, body_x=0.0, clearance=None, kind=None):
    """Open or relaxed hand over (x, y), clear of all pieces by >= 12 mm."""
    sh = shoulder(scene, spec.owner, spec.side, body_x)
    head = heading_to(sh[:2], xy) + rng.normal(0, 0.2)
    kind = kind or str(rng.choice(["relaxed", "open", "hover", "rest"]))
    pose = make_pose(kind, 1.0, rng)
    R = hand_world_rotation(head, rng.uniform(-0.05, 0.45), rng.normal(0, 0.3))
    z = scene.piece_height("k") * 0.6 + (clearance if clearance is not None else rng.uniform(0.01, 0.10))
    for _ in range(8):
        hand = spec.build(pose, R, "palm", np.array([xy[0], xy[1], z]), value)
        if nearest_piece_dist(scene, hand) > 0.012 and hand.geom.hand.vertices[:, 2].min() > 0.004:
            break
        z += 0.015
    return hand, {"mode": "hover", "R": R, "heading": head, "pose": pose}


def rest(scene: BoardScene, spec: HandSpec, rng, value: int, body_x=0.0):
    """Hand resting on the table (or the board's border) at the owner's edge."""
    half = scene.board_total / 2
    facing = 1.0 if spec.owner == "w" else -1.0
    x = body_x + rng.uniform(-0.2, 0.2)
    y = -facing * (half + rng.uniform(0.0, 0.06))
    sh = shoulder(scene, spec.owner, spec.side, body_x)
    head = heading_to(sh[:2], [x, y]) + rng.normal(0, 0.3)
    R = hand_world_rotation(head, rng.uniform(-0.1, 0.15), rng.normal(0, 0.15))
    pose = make_pose(str(rng.choice(["rest", "relaxed", "fist"])), 1.0, rng)
    z = scene.table_z + 0.025
    hand = spec.build(pose, R, "palm", np.array([x, y, z]), value, arm_override={"elev": 0.12})
    lowest = hand.geom.hand.vertices[:, 2].min()
    dz = scene.table_z + 0.001 - lowest
    hand = spec.build(pose, R, "palm", np.array([x, y, z + dz]), value, arm_override={"elev": 0.12})
    return hand, {"mode": "rest", "R": R, "pose": pose}


def nearest_piece_dist(scene: BoardScene, hand: HandInst) -> float:
    d = scene.hand_piece_distances([hand])[hand.hid]
    return min(d.values()) if d else 1.0


__all__ = ["HandSpec", "grasp", "touch", "hover", "rest", "shoulder", "heading_to", "blend_pose", "sq_xy"]
