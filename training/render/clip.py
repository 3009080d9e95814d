"""Clips mode: render a scripted game fragment to H.264 with exact per-frame labels.

    python -m render.clip --fen FEN --script EVENTS.jsonl --out DIR --seed S [--fps 20]

The script is the rule engine's event contract (JSON Lines; t, ev, sq, piece, hand). Each hand
(w1, w2, b1, ...) gets a track of keyframes (hand transform + finger pose): it reaches in from
its owner's side, pre-shapes, grasps (settled on the piece mesh), lifts, carries in an arc,
sets down, releases, and withdraws, with minimum-jerk timing. Every scripted contact happens at
the scripted time. Output in DIR: clip.mp4, labels.json, events.jsonl (the script), and the
rulings of `touchmove rules` when that binary exists (see RULES HOOK below).
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import time

import chess
import numpy as np
from scipy.spatial.transform import Rotation, Slerp

from . import post
from .camera import sample_camera
from .frames import _jsonable
from .hand import make_pose, blend_pose
from .placing import HandSpec, grasp, rest, shoulder, touch
from .positions import board_dict
from .scene import CONTACT_MM, SQUARES, BoardScene, PieceInst, playing_corners, sample_style, sq_xy

REACH_S = 0.75  # time to reach in from away to the first pre-shape
PRE_S = 0.35  # pre-shape (open hand just above the target) before a contact
LIFT_S = 0.30  # from grasp to raised
AWAY_GAP_S = 2.2  # a free hand idle this long between actions withdraws
RAISE_M = 0.04
# What a touch does to the piece (render.clip draws from these; labels carry what was drawn).
# A deliberate touch is mostly a grasp or a press that slides the piece a few millimetres or
# turns it a few degrees (`moves` of them; the rest are a fingertip resting on the piece and
# move nothing); a brush on the way elsewhere rarely moves it, and then by less.
DISPLACEMENT = {
    "touch": {"moves": 0.8, "shift_mm": (0.8, 4.0), "turns": 0.5, "turn_deg": (2.0, 10.0)},
    "brush": {"moves": 0.1, "shift_mm": (0.3, 1.2), "turns": 0.3, "turn_deg": (1.0, 3.0)},
}


def minjerk(x):
    x = np.clip(x, 0, 1)
    return float(np.clip(x ** 3 * (10 - 15 * x + 6 * x ** 2), 0.0, 1.0))


class KF:
    __slots__ = ("t", "T", "pose", "tag", "arc")

    def __init__(self, t, T, pose, tag="", arc=0.0):
        self.t, self.T, self.pose, self.tag, self.arc = float(t), np.asarray(T, float), pose, tag, arc


def raised(T, dz=RAISE_M, dxy=(0, 0)):
    T = T.copy()
    T[:3, 3] += [dxy[0], dxy[1], dz]
    return T


class Track:
    def __init__(self, hid, spec, value):
        self.hid, self.spec, self.value = hid, spec, value
        self.kfs: list[KF] = []
        self.away_T = None
        self.away_pose = None
        self.away_visible = False
        self.holding: list[int] = []

    def add(self, kf: KF, must=False):
        if self.kfs and kf.t <= self.kfs[-1].t + 0.03:
            if not must:
                return
            # an exact event keyframe wins over earlier optional ones
            while self.kfs and kf.t <= self.kfs[-1].t + 0.03 and not self.kfs[-1].tag.startswith("ev"):
                self.kfs.pop()
            if self.kfs and kf.t <= self.kfs[-1].t:
                kf.t = self.kfs[-1].t + 0.01
        self.kfs.append(kf)

    def last(self):
        return self.kfs[-1] if self.kfs else None

    def at(self, t):
        """Interpolated (T, pose) at time t."""
        k = self.kfs
        if t <= k[0].t:
            return k[0].T, k[0].pose
        if t >= k[-1].t:
            return k[-1].T, k[-1].pose
        i = int(np.searchsorted([x.t for x in k], t, side="right")) - 1
        a, b = k[i], k[i + 1]
        u = minjerk((t - a.t) / max(b.t - a.t, 1e-6))
        p = a.T[:3, 3] * (1 - u) + b.T[:3, 3] * u
        # travel in an arc over the pieces: the longer the way, the higher
        dist = float(np.linalg.norm(b.T[:2, 3] - a.T[:2, 3]))
        arc = max(b.arc, min(0.09, 0.45 * dist) if dist > 0.04 else 0.0)
        if arc:
            p[2] += arc * np.sin(np.pi * u)
        rots = Rotation.from_matrix(np.stack([a.T[:3, :3], b.T[:3, :3]]))
        R = Slerp([0, 1], rots)([u]).as_matrix()[0]
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = R, p
        return T, blend_pose(a.pose, b.pose, float(u))


class PieceTimeline:
    """Per piece: ('rest', t, pose) | ('held', t, hid, [(t, rel)]) | ('topple', t, t1, pose0, pose1)."""

    def __init__(self, pose0):
        self.segs = [("rest", -1e9, pose0)]

    def pose_at(self, t, tracks):
        seg = self.segs[0]
        for s in self.segs:
            if s[1] <= t:
                seg = s
        if seg[0] == "rest":
            return seg[2], None
        if seg[0] == "topple":
            _, t0, t1, p0, p1 = seg
            u = minjerk((t - t0) / (t1 - t0))
            return interp_pose(p0, p1, u), None
        _, t0, hid, rels = seg
        T, _ = tracks[hid].at(t)
        rel = rels[0][1]
        for (ta, ra), (tb, rb) in zip(rels, rels[1:]):
            if ta <= t <= tb:
                rel = interp_pose(ra, rb, minjerk((t - ta) / max(tb - ta, 1e-6)))
                break
            if t > tb:
                rel = rb
        return T @ rel, hid


def interp_pose(A, B, u):
    sa = np.cbrt(np.linalg.det(A[:3, :3]))
    sb = np.cbrt(np.linalg.det(B[:3, :3]))
    rots = Rotation.from_matrix(np.stack([A[:3, :3] / sa, B[:3, :3] / sb]))
    R = Slerp([0, 1], rots)([u]).as_matrix()[0]
    M = np.eye(4)
    M[:3, :3] = R * (sa * (1 - u) + sb * u)
    M[:3, 3] = A[:3, 3] * (1 - u) + B[:3, 3] * u
    return M


class Planner:
    """version 2 (default; the committed fixtures) adds to version 1: lift-off before a hand
    travels from rest, arcs raised over the pieces along each path, and resting places clear of
    pieces (far fewer incidental contacts)."""

    def __init__(self, scene: BoardScene, events, rng, fps, version=2, seed=0):
        self.scene, self.events, self.rng, self.fps = scene, events, rng, fps
        # what a touch does to the piece is drawn apart, so the rest of the clip is drawn as before
        self.feel = np.random.default_rng([seed, 4107])
        self.version = version
        self.tracks: dict[str, Track] = {}
        self.timelines: dict[int, PieceTimeline] = {p.id: PieceTimeline(scene.piece_world_pose(p))
                                                    for p in scene.pieces.values()}
        self.at_sq: dict[str, int] = {p.sq: p.id for p in scene.pieces.values() if p.sq}
        self.spare_slots = {"w": 0, "b": 0}
        self.captured: set[int] = set()
        self.dest_cache = {}
        self.body_x = {"w": float(rng.normal(0, 0.05)), "b": float(rng.normal(0, 0.05))}
        sides = {}
        for e in events:
            h = e.get("hand")
            if h and h not in self.tracks:
                owner = h[0]
                spec = HandSpec.sample(rng, h, owner)
                dom = sides.setdefault(owner, "right" if rng.random() < 0.85 else "left")
                spec.side = dom if h[1:] == "1" else ("left" if dom == "right" else "right")
                spec.set_body(scene, self.body_x[owner], rng=rng)
                self.tracks[h] = Track(h, spec, len(self.tracks) + 1)
        for tr in self.tracks.values():
            self._make_away(tr)

    # -------------------------------------------------------------------------------------
    def _make_away(self, tr: Track):
        if self.rng.random() < 0.45:
            from .placing import nearest_piece_dist
            for _ in range(8 if self.version >= 2 else 1):  # a resting hand must not lie against a piece at the board's edge
                h, info = rest(self.scene, tr.spec, self.rng, tr.value, self.body_x[tr.spec.owner])
                if nearest_piece_dist(self.scene, h) > 0.015:
                    break
            tr.away_T, tr.away_pose, tr.away_visible = h.geom.T, info["pose"], True
        else:
            sh = shoulder(self.scene, tr.spec.owner, tr.spec.side, self.body_x[tr.spec.owner])
            facing = 1.0 if tr.spec.owner == "w" else -1.0
            from .hand import hand_world_rotation
            R = hand_world_rotation(0.0 if facing > 0 else np.pi, 0.2, 0.0)
            T = np.eye(4)
            T[:3, :3] = R[:3, :3]
            T[:3, 3] = [sh[0], sh[1] + facing * 0.05, 0.18]
            tr.away_T, tr.away_pose, tr.away_visible = T, make_pose("relaxed", 1.0), False

    def _away_kf(self, tr, t, tag="away"):
        return KF(t, tr.away_T, tr.away_pose, tag)

    def _up_kf(self, tr, t):
        """Just above the away pose: hands lift off the table before travelling over the board."""
        return KF(t, raised(tr.away_T, 0.10), tr.away_pose, "away-up")

    def _ensure_present(self, tr: Track, t_first):
        """Insert the reach-in: away until t_first - REACH_S, then up and in."""
        last = tr.last()
        t_go = t_first - REACH_S
        if last is None:
            tr.add(self._away_kf(tr, 0.0))
            tr.add(self._away_kf(tr, max(0.01, t_go)))
        elif last.tag == "away":
            tr.add(self._away_kf(tr, max(last.t + 0.05, t_go)))
        elif t_first - last.t > AWAY_GAP_S and not tr.holding:
            if self.version >= 2:
                tr.add(self._up_kf(tr, last.t + 0.45))
            tr.add(self._away_kf(tr, last.t + 0.7))
            tr.add(self._away_kf(tr, t_go))
        else:
            return
        if self.version >= 2:
            tr.add(self._up_kf(tr, tr.last().t + 0.22))

    def _piece(self, sq):
        pid = self.at_sq.get(sq)
        return self.scene.pieces.get(pid) if pid is not None else None

    def _grasp(self, tr, piece):
        h, info = grasp(self.scene, tr.spec, piece, self.rng, tr.value, self.body_x[tr.spec.owner], tries=6)
        return h.geom.T, info["pose"], info["open_pose"]

    def _dest_grasp(self, tr, letter, xy, yaw):
        v = PieceInst(-1, letter, None, xy, yaw)
        return self._grasp(tr, v) + (self.scene.standing_pose(xy, yaw),)

    def _spare_xy(self, owner):
        half = self.scene.board_total / 2
        k = self.spare_slots[owner]
        self.spare_slots[owner] += 1
        sx = 1.0 if owner == "w" else -1.0
        return np.array([sx * (half + 0.05 + 0.045 * (k % 2)), -sx * (half - 0.04 - 0.045 * (k // 2))])

    # -------------------------------------------------------------------------------------
    def _pick(self, tr, piece, t_contact, t_lift, tag_contact):
        """Pre-shape, grasp at t_contact, lift at t_lift."""
        T, pose, open_pose = self._grasp(tr, piece)
        self._ensure_present(tr, t_contact - PRE_S)
        tr.add(KF(t_contact - PRE_S, raised(T, 0.035), open_pose, "pre", arc=0.03))
        tr.add(KF(t_contact, T, pose, tag_contact), must=True)
        if t_lift > t_contact:
            tr.add(KF(t_lift, T, pose, "ev-lift"), must=True)
        P = self.scene.piece_world_pose(piece)
        rel = np.linalg.inv(T) @ P
        self.timelines[piece.id].segs.append(("held", t_lift, tr.hid, [(t_lift, rel)]))
        tr.holding.append(piece.id)
        piece.held_by = tr.hid
        if piece.sq and self.at_sq.get(piece.sq) == piece.id:
            del self.at_sq[piece.sq]
        piece.sq = None
        return T, pose

    def _put(self, tr, pid, xy, t, release, sq=None, tag="ev-release"):
        """Carry the held piece pid to xy and set it down at t (release or only contact)."""
        piece = self.scene.pieces[pid]
        yaw = float(self.rng.uniform(0, 2 * np.pi)) if piece.letter.lower() != "n" else \
            (np.pi / 2 if piece.letter.isupper() else -np.pi / 2) + self.rng.normal(0, 0.3)
        key = (pid, sq, tr.hid)
        if sq is not None and key in self.dest_cache:
            T, pose, open_pose, P, xy, yaw = self.dest_cache[key]
        else:
            T, pose, open_pose, P = self._dest_grasp(tr, piece.letter, xy, yaw)
            self.dest_cache[key] = (T, pose, open_pose, P, xy, yaw)
        if sq is None:  # off the board: on the table
            P = P.copy()
            P[2, 3] = self.scene.table_z
            T = T.copy()
            T[2, 3] += self.scene.table_z
        last = tr.last()
        carry = t - PRE_S
        tr.add(KF(carry, raised(T, 0.03), pose, "carry",
                  arc=0.03 if last is not None and np.linalg.norm(last.T[:3, 3] - T[:3, 3]) > 0.06 else 0.0))
        tr.add(KF(t, T, pose, tag), must=True)
        seg = self.timelines[pid].segs[-1]
        rel_dest = np.linalg.inv(T) @ P
        seg[3].append((t, rel_dest))
        if release:
            self.timelines[pid].segs.append(("rest", t, P))
            tr.holding.remove(pid)
            piece.held_by = None
            piece.pose = P if sq is None else None
            piece.xy = np.array(xy, float)
            piece.yaw = yaw
            piece.sq = sq
            if sq:
                self.at_sq[sq] = pid
            tr.add(KF(t + 0.15, T, open_pose, "open"))
            tr.add(KF(t + 0.45, raised(T, 0.05), open_pose, "up"))
        else:
            tr.add(KF(t + 0.2, raised(T, 0.02), pose, "up"))
        return T

    def plan(self):
        evs = self.events
        for i, e in enumerate(evs):
            ev, t, hid = e["ev"], float(e["t"]), e.get("hand")
            tr = self.tracks.get(hid)
            sq = e.get("sq")
            nxt = next((x for x in evs[i + 1:] if x.get("hand") == hid), None)
            if ev == "adjust" or tr is None:
                continue  # a declaration: nothing visible
            if ev == "touch":
                p = self._piece(sq)
                if p is None:
                    continue
                if nxt is not None and nxt["ev"] == "lift" and nxt.get("sq") == sq and float(nxt["t"]) - t < 2.0:
                    self._pick(tr, p, t, float(nxt["t"]), "ev-touch")
                    e["_consumed_next"] = True
                    nxt["_done"] = True
                else:
                    self._touch(tr, p, t, nxt, e, side=False)
            elif ev == "brush":
                p = self._piece(sq)
                if p is not None:
                    self._touch(tr, p, t, nxt, e, side=True, brush=True)
            elif ev == "lift":
                if e.get("_done"):
                    continue
                p = self._piece(sq)
                if p is None:
                    continue
                self._pick(tr, p, t - 0.12, t, "ev-grasp")
            elif ev in ("contact", "release"):
                if e.get("piece"):
                    self._swap_if_needed(tr, e["piece"], t)
                if not tr.holding and e.get("piece"):
                    self._fetch_spare(tr, e["piece"], t)
                if not tr.holding:
                    continue
                # a piece captured earlier in this move may still be in the hand: put the mover down
                movers = [q for q in tr.holding if q not in self.captured]
                pid = movers[0] if movers else tr.holding[0]
                xy = sq_xy(sq, self.scene.s) + self.rng.normal(0, 0.04 * self.scene.s, 2)
                occ = self._piece(sq)
                if ev == "contact" and occ is not None and occ.id != pid:
                    # the held piece touches the piece standing on sq: stop beside it, towards the mover
                    src = self.scene.piece_world_pose(self.scene.pieces[pid])[:2, 3]
                    d = src - xy
                    d = d / (np.linalg.norm(d) + 1e-9)
                    xy = xy + d * self.scene.s * 0.62
                self._put(tr, pid, xy, t,
                          release=(ev == "release"), sq=sq if ev == "release" else sq,
                          tag="ev-" + ev)
                if ev == "contact":
                    self.scene.pieces[pid].sq = None
            elif ev == "place":
                self._swap_if_needed(tr, e.get("piece"), t)
                if not tr.holding:
                    self._fetch_spare(tr, e.get("piece", "Q" if hid[0] == "w" else "q"), t)
                pid = tr.holding[0]
                self._put(tr, pid, sq_xy(sq, self.scene.s), t, release=True, sq=sq, tag="ev-place")
            elif ev == "remove":
                if sq:
                    p = self._piece(sq)
                    if p is None:
                        continue
                    self._pick(tr, p, t - 0.15, t, "ev-grasp")
                    self.captured.add(p.id)
                    gap = (float(nxt["t"]) - t) if nxt is not None else 9.0
                    if gap > 1.3:
                        self._put(tr, p.id, self._spare_xy(hid[0]), t + min(gap - 0.5, 0.9), release=True,
                                  sq=None, tag="aside")
                elif tr.holding:
                    pid = tr.holding[-1]
                    self._put(tr, pid, self._spare_xy(hid[0]), t, release=True, sq=None, tag="ev-remove")
            elif ev == "knock":
                p = self._piece(sq)
                if p is not None:
                    self._knock(tr, p, t)
            elif ev == "press":
                self._press(tr, t)
        end = max(float(e["t"]) for e in evs) + 1.5
        for tr in self.tracks.values():
            last = tr.last()
            if last is None:
                tr.add(self._away_kf(tr, 0.0))
                continue
            if last.tag != "away":
                ta = last.t + 0.8
                if self.version >= 2:
                    tr.add(self._up_kf(tr, ta - 0.25))
                tr.add(self._away_kf(tr, ta))
                for pid in list(tr.holding):  # pieces still held go aside with the hand
                    self.timelines[pid].segs.append(("rest", ta, self._aside_pose(tr)))
                    tr.holding.remove(pid)
            end = max(end, tr.last().t + 0.5)
        if self.version >= 2:
            self._clearance_arcs()
        return end

    def _rest_pieces_at(self, t):
        """World poses of the pieces standing or lying (not held) at time t."""
        out = []
        for pid, tl in self.timelines.items():
            seg = None
            for sg in tl.segs:
                if sg[1] <= t:
                    seg = sg
            if seg is None or seg[0] == "held":
                continue
            out.append((pid, seg[2] if seg[0] == "rest" else seg[4]))
        return out

    def _clearance_arcs(self, corridor=0.07, margin=0.012):
        """Raise each travelling segment's arc so the hand (and what it holds) passes over the
        pieces standing along its path instead of sweeping through them."""
        for tr in self.tracks.values():
            for a, b in zip(tr.kfs, tr.kfs[1:]):
                pa, pb = a.T[:3, 3], b.T[:3, 3]
                dxy = pb[:2] - pa[:2]
                L = float(np.linalg.norm(dxy))
                if L < 0.06:
                    continue
                tallest = 0.0
                for pid, P in self._rest_pieces_at(0.5 * (a.t + b.t)):
                    c = P[:2, 3]
                    u = float(np.clip((c - pa[:2]) @ dxy / (L * L), 0.15, 0.85))
                    if np.linalg.norm(pa[:2] + u * dxy - c) < corridor:
                        tallest = max(tallest, P[2, 3] + self.scene.piece_height(self.scene.pieces[pid].letter))
                if tallest <= 0:
                    continue
                low = []
                for kf in (a, b):
                    g = tr.spec.build(kf.pose, kf.T, "palm", None, tr.value, T=kf.T).geom
                    z = float(g.hand.vertices[:, 2].min())
                    held = [q for q, tl in self.timelines.items()
                            if any(sg[0] == "held" and sg[2] == tr.hid and sg[1] <= kf.t for sg in tl.segs)]
                    if held:  # conservatively: a held piece hangs most of its height below the hand
                        z -= max(self.scene.piece_height(self.scene.pieces[q].letter) for q in held) * 0.7
                    low.append(z)
                need = tallest + margin - min(low)
                if need > b.arc:
                    b.arc = float(min(need, 0.16))

    def _swap_if_needed(self, tr, letter, t):
        if not letter or not tr.holding:
            return
        held = self.scene.pieces[tr.holding[0]]
        if held.letter != letter:
            self._put(tr, held.id, self._spare_xy(tr.spec.owner), t - 2.2, release=True, sq=None, tag="aside")

    def _aside_pose(self, tr):
        return self.scene.standing_pose(self._spare_xy(tr.spec.owner), 0.0, z=self.scene.table_z)

    def _fetch_spare(self, tr, letter, t):
        """Take an off-board piece (spare queen etc.) from beside the board before t."""
        xy = self._spare_xy(tr.spec.owner)
        p = self.scene.add_piece(letter, None, xy, 0.0)
        p.pose = self.scene.standing_pose(xy, 0.0, z=self.scene.table_z)
        self.scene.update_piece(p)
        self.timelines[p.id] = PieceTimeline(p.pose)
        self._pick(tr, p, t - 1.4, t - 1.25, "fetch")

    def _touch(self, tr, p, t, nxt, e, side=False, brush=False):
        h, info = touch(self.scene, tr.spec, p, self.rng, tr.value, self.body_x[tr.spec.owner], top=not side,
                        tries=6)
        T, pose = h.geom.T, info["pose"]
        self._ensure_present(tr, t - PRE_S)
        if brush:
            fwd = T[:3, :3] @ np.array([0, 1.0, 0]) / np.linalg.norm(T[:3, 1])
            tr.add(KF(t - 0.25, raised(T, 0.005, -fwd[:2] * 0.06), pose, "pre"))
            tr.add(KF(t, T, pose, "ev-brush"), must=True)
            tr.add(KF(t + 0.25, raised(T, 0.025, fwd[:2] * 0.05), pose, "post"))
            if not p.toppled:
                self._displace(p, e, t, 0.2, brush=True)
            return
        tr.add(KF(t - PRE_S, raised(T, 0.03), pose, "pre"))
        tr.add(KF(t, T, pose, "ev-touch"), must=True)
        dwell = 0.35 if nxt is None else float(np.clip(float(nxt["t"]) - t - 0.5, 0.1, 0.5))
        if not p.toppled:
            self._displace(p, e, t, dwell)
        if p.toppled:  # "sets it upright": the piece rights itself under the finger
            P0 = self.scene.piece_world_pose(p)
            P1 = self.scene.standing_pose(sq_xy(p.sq, self.scene.s), p.yaw)
            self.timelines[p.id].segs.append(("topple", t, t + dwell, P0, P1))
            self.timelines[p.id].segs.append(("rest", t + dwell, P1))
            p.pose, p.toppled = None, False
        tr.add(KF(t + dwell, T, pose, "dwell"))
        tr.add(KF(t + dwell + 0.3, raised(T, 0.05), pose, "up"))

    def _displace(self, p, e, t, dwell, brush=False):
        """What the fingers do to the piece they touch, drawn from the stated ranges of
        DISPLACEMENT; the piece slides to its new place over the dwell and the event's label
        carries the true shift (mm, board x/y) and turn (degrees)."""
        d = DISPLACEMENT["brush" if brush else "touch"]
        f = self.feel
        shift, turn = np.zeros(2), 0.0
        if f.random() < d["moves"]:
            a = f.uniform(0, 2 * np.pi)
            shift = f.uniform(*d["shift_mm"]) * np.array([np.cos(a), np.sin(a)])
            if f.random() < d["turns"]:
                turn = float(f.uniform(*d["turn_deg"]) * f.choice([-1, 1]))
        e["displacement"] = {"mm": [round(float(v), 2) for v in shift], "deg": round(turn, 2)}
        if not shift.any() and turn == 0.0:
            return
        P0 = self.scene.piece_world_pose(p)
        p.xy = p.xy + shift / 1000.0
        p.yaw = p.yaw + np.radians(turn)
        P1 = self.scene.standing_pose(p.xy, p.yaw)
        self.timelines[p.id].segs.append(("topple", t, t + max(dwell, 0.1), P0, P1))
        self.timelines[p.id].segs.append(("rest", t + max(dwell, 0.1), P1))

    def _press(self, tr, t):
        btn = self.scene.clock_buttons.get(tr.spec.owner)
        if btn is None:
            return
        v = PieceInst(-1, "p", None, btn[:2], 0.0)
        v.pose = np.eye(4)
        v.pose[:3, :3] *= 0.001
        v.pose[:3, 3] = btn
        from .hand import hand_world_rotation
        sh = shoulder(self.scene, tr.spec.owner, tr.spec.side, self.body_x[tr.spec.owner])
        from .placing import heading_to
        R = hand_world_rotation(heading_to(sh[:2], btn[:2]), 0.9, 0.0)
        pose = make_pose("point", 0.3)
        h = tr.spec.build(pose, R, "point", btn + [0, 0, 0.002], tr.value)
        T = h.geom.T
        self._ensure_present(tr, t - PRE_S)
        tr.add(KF(t - PRE_S, raised(T, 0.04), pose, "pre"))
        tr.add(KF(t, T, pose, "ev-press"), must=True)
        tr.add(KF(t + 0.12, T, pose, "dwell"))
        tr.add(KF(t + 0.4, raised(T, 0.06), pose, "up"))

    def _knock(self, tr, p, t):
        """The hand sweeps past the piece; it topples (away from the hand) from t."""
        h, info = touch(self.scene, tr.spec, p, self.rng, tr.value, self.body_x[tr.spec.owner], top=False)
        T, pose = h.geom.T, make_pose("relaxed", 1.0)
        fwd = T[:3, 1] / np.linalg.norm(T[:3, 1])
        self._ensure_present(tr, t - 0.3)
        tr.add(KF(t - 0.3, raised(T, 0.01, -fwd[:2] * 0.08), pose, "pre"))
        tr.add(KF(t, T, pose, "ev-knock"), must=True)
        tr.add(KF(t + 0.3, raised(T, 0.03, fwd[:2] * 0.06), pose, "post"))
        P0 = self.scene.piece_world_pose(p)
        d = np.r_[fwd[:2], 0]
        d /= np.linalg.norm(d)
        axis = np.cross([0, 0, 1.0], d)
        r = 0.3 * self.scene.scale
        pivot = P0[:3, 3] + d * r
        import trimesh
        Rm = trimesh.transformations.rotation_matrix(np.pi / 2 * 0.97, axis, pivot)
        P1 = Rm @ P0
        P1[2, 3] += r * 0.95  # lying on its side: the body's radius lifts the axis
        self.timelines[p.id].segs.append(("topple", t, t + 0.3, P0, P1))
        self.timelines[p.id].segs.append(("rest", t + 0.3, P1))
        p.pose = P1
        p.toppled = True


# ------------------------------------------------------------------------------------------
def load_events(path):
    evs = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            e = json.loads(line)
            if "t" not in e or "ev" not in e:
                raise SystemExit(f"{path}:{n}: each event needs t and ev")
            evs.append(e)
    evs.sort(key=lambda e: float(e["t"]))
    return evs


def find_touchmove():
    """RULES HOOK: the lead's binary, if built."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    cands = [os.environ.get("TOUCHMOVE_BIN", "")] + sorted(glob.glob(os.path.join(root, "target", "*", "touchmove")))
    cands += [shutil.which("touchmove") or ""]
    for c in cands:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


def run_rules(fen, script_path):
    """Runs `touchmove rules --fen FEN --clock --declarations EVENTS.jsonl`; returns
    (command, parsed JSON Lines or None, error text or None)."""
    exe = find_touchmove()
    cmd = ["touchmove", "rules", "--fen", fen, "--clock", "--declarations", os.path.basename(script_path)]
    if exe is None:
        return cmd, None, "touchmove binary not found (build it, then run python -m render.fill_rulings DIR)"
    try:
        r = subprocess.run([exe] + cmd[1:-1] + [script_path], capture_output=True, text=True, timeout=60)
    except Exception as e:  # noqa: BLE001
        return cmd, None, str(e)
    out = []
    for line in r.stdout.splitlines():
        line = line.strip()
        if line:
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                out.append({"unparsed": line})
    return cmd, out, (r.stderr.strip() or None) if r.returncode else None


def game_style(rng):
    """The look of a game in play: any board, set, table and light (but a spot), with a clock."""
    style = sample_style(rng)
    style["distractors"]["clock"] = True
    style["light"]["kind"] = "tubes" if style["light"]["kind"] == "spot" else style["light"]["kind"]
    return style


def set_down(scene, rng, letter, sq):
    """Where and at what turn a player leaves `letter` on `sq`: near the centre, a knight facing
    the opponent, any other piece at any turn. Returns (xy, yaw)."""
    s = scene.s
    yaw = ((np.pi / 2 if letter.isupper() else -np.pi / 2) + rng.normal(0, 0.4)) if letter.lower() == "n" \
        else rng.uniform(0, 2 * np.pi)
    return sq_xy(sq, s) + np.clip(rng.normal(0, 0.05 * s, 2), -0.15 * s, 0.15 * s), yaw


def fixed_camera(scene, rng):
    """A camera fixed over the board for a whole game, and its sensor's effects (no shake)."""
    outline = np.array([[x, y, 0] for x in (-1, 1) for y in (-1, 1)]) * scene.board_total / 2 * 1.05
    cam, cinfo = sample_camera(rng, scene.W, scene.H, outline, [0, 0, 0], "clips")
    pp = post.sample_post(rng)
    pp.update({"shake": 0.0, "downscale": 1.0, "noise": float(rng.uniform(0.002, 0.012)), "defocus": 0.0})
    return cam, cinfo, pp


def render_clip(fen, events, out_dir, seed, fps=20, size=(640, 480), max_s=None, script_path=None, min_s=0.0,
                planner=2):
    rng = np.random.default_rng(seed)
    W, H = size
    board_fen = fen.split()[0]
    scene = BoardScene(game_style(rng), W, H)
    s = scene.s
    for sq, letter in sorted(board_dict(board_fen).items()):
        scene.add_piece(letter, sq, *set_down(scene, rng, letter, sq))
    planner_version = planner
    planner = Planner(scene, events, rng, fps, version=planner_version, seed=seed)
    end = planner.plan()
    end = max(end, min_s)  # a calm tail: the scene after the last action
    if max_s:
        end = min(end, max_s)
    n_frames = int(np.ceil(end * fps))
    cam, cinfo, pp = fixed_camera(scene, rng)
    shutter = float(rng.uniform(0.4, 1.0)) / fps
    os.makedirs(out_dir, exist_ok=True)
    mp4 = os.path.join(out_dir, "clip.mp4")
    ff = subprocess.Popen(["ffmpeg", "-y", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt", "rgb24",
                           "-s", f"{W}x{H}", "-r", str(fps), "-i", "-", "-c:v", "libx264", "-preset", "medium",
                           "-crf", "27", "-maxrate", "480k", "-bufsize", "960k", "-pix_fmt", "yuv420p",
                           "-movflags", "+faststart", mp4], stdin=subprocess.PIPE)
    sq_index = {q: i for i, q in enumerate(SQUARES)}
    frames = []
    prev_key, prev_out = None, None
    t0 = time.perf_counter()
    tracks = planner.tracks
    half = 4 * s
    for f in range(n_frames):
        t = f / fps
        hands = []
        for tr in tracks.values():
            T, pose = tr.at(t)
            hands.append((tr, tr.spec.build(pose, T, "palm", None, tr.value, T=T)))
        held = {}
        for pid, tl in planner.timelines.items():
            P, hid = tl.pose_at(t, tracks)
            p = scene.pieces[pid]
            p.pose = P
            p.held_by = hid
            if hid:
                held[pid] = hid
            scene.update_piece(p)
        # current square of each standing piece (from its position)
        visible = [h for tr, h in hands if _in_view(cam, h)]
        key = _state_key(visible, scene)
        scene.set_hands(visible)
        if key != prev_key:
            out = scene.render(cam)
            prev_out, prev_key = out, key
        else:
            out = prev_out
        # motion blur per visible hand from its wrist velocity in the image
        img = out["color"]
        for tr, h in hands:
            if h not in visible:
                continue
            Ta, _ = tr.at(t - shutter / 2)
            Tb, _ = tr.at(t + shutter / 2)
            uv = cam.project(np.stack([Ta[:3, 3], Tb[:3, 3]]))
            m = out["mask"]
            region = ((m == h.value) | (m == 64 + h.value) | (m == 128 + h.value)).astype(np.uint8)
            img = post.motion_blur_region(img, region, uv[1] - uv[0])
        img = post.apply(img, pp, np.random.default_rng([seed, f]))
        ff.stdin.write(np.ascontiguousarray(img).tobytes())
        # labels
        pieces = ["."] * 64
        toppled, in_hand = [], []
        for pid, p in scene.pieces.items():
            P = scene.piece_world_pose(p)
            if p.held_by:
                in_hand.append({"hand": p.held_by, "piece": p.letter})
                continue
            x, y, z = P[:3, 3]
            if abs(x) < half and abs(y) < half and z > -0.002:
                fi, ri = int((x + half) // s), int((y + half) // s)
                sqn = "abcdefgh"[fi] + str(ri + 1)
                pieces[sq_index[sqn]] = p.letter
                if P[2, 2] / np.cbrt(np.linalg.det(P[:3, :3])) < 0.9:
                    toppled.append(sqn)
        cov = scene.square_coverage(cam, out["seg_und"], out["pad"]) if visible else np.zeros(64)
        dists = scene.hand_piece_distances(visible) if visible else {}
        contact = set()
        pid_sq = {}
        for pid, p in scene.pieces.items():
            if not p.held_by:
                P = scene.piece_world_pose(p)
                x, y = P[0, 3], P[1, 3]
                if abs(x) < half and abs(y) < half:
                    pid_sq[pid] = "abcdefgh"[int((x + half) // s)] + str(int((y + half) // s) + 1)
        for hid, dd in dists.items():
            for pid, d in dd.items():
                if d < CONTACT_MM / 1000 and pid in pid_sq:
                    contact.add(pid_sq[pid])
        over = sum(1 for _, h in hands if np.any((np.abs(h.geom.hand.vertices[:, 0]) < half) &
                                                  (np.abs(h.geom.hand.vertices[:, 1]) < half)))
        frames.append({"frame": f, "t": round(t, 4), "pieces": "".join(pieces), "in_hand": in_hand,
                       "covered": {SQUARES[i]: round(float(c), 3) for i, c in enumerate(cov) if c > 0.01},
                       "contact": sorted(contact), "hands_over_board": int(over),
                       "hands_visible": len(visible), "toppled": toppled})
        if f % 50 == 0:
            el = time.perf_counter() - t0
            print(f"  frame {f}/{n_frames}  {el / (f + 1):.2f} s/frame", flush=True)
    ff.stdin.close()
    ff.wait()
    dt = time.perf_counter() - t0
    ev_out = []
    for e in events:
        d = {k: v for k, v in e.items() if not k.startswith("_")}
        d["frame"] = int(round(float(e["t"]) * fps))
        ev_out.append(d)
    unscripted = unscripted_contacts(events, frames, fps)
    if unscripted:
        print(f"  WARNING: {len(unscripted)} frame-squares with contact the script does not explain, "
              f"e.g. {unscripted[:3]}", flush=True)
    labels = {
        "format": "touchmove-clip-labels/1", "planner": planner_version,
        "fen": fen, "fps": fps, "size": [W, H], "n_frames": n_frames, "seed": seed,
        "corners": np.round(cam.project(playing_corners(s)), 2).tolist(),
        "corners_order": "a8,h8,h1,a1", "square_order": "a8,b8,...,h8,a7,...,h1 (FEN reading order)",
        "camera": cam.to_json(), "camera_info": cinfo, "style": dict(scene.style),
        "hands": {tr.hid: {"owner": tr.spec.owner, "side": tr.spec.side, "skin": tr.spec.skin,
                           "mask_value": tr.value} for tr in tracks.values()},
        "events": ev_out,
        "frames": frames,
        "unscripted_contacts": unscripted,
        "render_s_per_frame": round(dt / max(n_frames, 1), 3),
    }
    if script_path:
        cmd, rules, err = run_rules(fen, script_path)
        labels["rules_cmd"] = " ".join(cmd)
        labels["rules"] = rules
        if err:
            labels["rules_error"] = err
    with open(os.path.join(out_dir, "labels.json"), "w") as f:
        json.dump(labels, f, default=_jsonable, separators=(",", ":"))
    return labels, dt


def unscripted_contacts(events, frames, fps, before=0.7, after=1.0):
    """Frame/square pairs where a hand touches a piece with no scripted event on that square
    nearby in time (the renderer's hands should only touch what the script says)."""
    win = {}
    for e in events:
        if e.get("sq"):
            win.setdefault(e["sq"], []).append((float(e["t"]) - before, float(e["t"]) + after))
    # a touched/lifted piece stays in contact until its next event: extend windows to it
    out = []
    for fr in frames:
        for sq in fr["contact"]:
            if not any(a <= fr["t"] <= b for a, b in win.get(sq, [])):
                out.append({"frame": fr["frame"], "sq": sq})
    return out


def _in_view(cam, h):
    v = h.geom.hand.vertices[::7]
    if cam.depth(v).max() <= 0:
        return False
    uv = cam.project(v, distort=False)
    m = 0.15
    ok = (uv[:, 0] > -m * cam.W) & (uv[:, 0] < (1 + m) * cam.W) & (uv[:, 1] > -m * cam.H) & (uv[:, 1] < (1 + m) * cam.H)
    if ok.any():
        return True
    for mm in (h.geom.forearm, h.geom.sleeve):
        if mm is not None:
            uv = cam.project(mm.vertices, distort=False)
            if np.any((uv[:, 0] > 0) & (uv[:, 0] < cam.W) & (uv[:, 1] > 0) & (uv[:, 1] < cam.H)):
                return True
    return False


def _state_key(visible, scene):
    parts = [np.round(h.geom.T, 4).tobytes() + np.round(h.geom.hand.vertices[::50], 4).tobytes() for h in visible]
    parts += [np.round(scene.piece_world_pose(p), 5).tobytes() for p in scene.pieces.values()]
    return hash(b"".join(parts))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fen", required=True, help="start position (full FEN or board part)")
    ap.add_argument("--script", required=True, help="events, JSON Lines (the rule engine's event contract)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--fps", type=int, default=20)
    ap.add_argument("--size", default="640x480")
    ap.add_argument("--max-seconds", type=float, default=None)
    ap.add_argument("--min-seconds", type=float, default=0.0, help="pad the end with a still tail")
    ap.add_argument("--planner", type=int, default=2, choices=(1, 2),
                    help="hand-motion planner version (2: fewer incidental contacts than 1)")
    args = ap.parse_args(argv)
    W, H = (int(v) for v in args.size.lower().split("x"))
    fen = args.fen if len(args.fen.split()) > 1 else args.fen + " w KQkq - 0 1"
    chess.Board(fen)  # validates
    events = load_events(args.script)
    os.makedirs(args.out, exist_ok=True)
    dst = os.path.join(args.out, "events.jsonl")
    if os.path.abspath(dst) != os.path.abspath(args.script):
        shutil.copyfile(args.script, dst)
    labels, dt = render_clip(fen, events, args.out, args.seed, args.fps, (W, H), args.max_seconds, dst,
                             min_s=args.min_seconds, planner=args.planner)
    size = os.path.getsize(os.path.join(args.out, "clip.mp4"))
    print(f"{labels['n_frames']} frames in {dt:.1f} s ({dt / labels['n_frames']:.2f} s/frame), "
          f"clip.mp4 {size / 1e6:.2f} MB, rules: {'yes' if labels.get('rules') is not None else 'not run'}")


if __name__ == "__main__":
    sys.exit(main())
