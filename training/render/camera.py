"""Camera model: pose sampling, pinhole projection (OpenCV convention) and lens distortion."""
from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np


@dataclass
class Camera:
    W: int
    H: int
    f: float
    cx: float
    cy: float
    pose: np.ndarray  # 4x4 camera->world, OpenGL convention (looks down -Z, +Y up)
    dist: np.ndarray = field(default_factory=lambda: np.zeros(5))  # OpenCV k1,k2,p1,p2,k3

    @property
    def K(self):
        return np.array([[self.f, 0, self.cx], [0, self.f, self.cy], [0, 0, 1.0]])

    def rvec_tvec(self):
        Rgl = self.pose[:3, :3]
        eye = self.pose[:3, 3]
        Rcv = np.diag([1.0, -1.0, -1.0]) @ Rgl.T  # world -> cv camera
        t = -Rcv @ eye
        return Rcv, t

    def project(self, pts, distort=True):
        """World points (N,3) -> pixels (N,2) in the final (distorted) image."""
        pts = np.ascontiguousarray(np.asarray(pts, np.float64).reshape(-1, 3))
        R, t = self.rvec_tvec()
        d = self.dist if distort else np.zeros(5)
        uv, _ = cv2.projectPoints(pts, cv2.Rodrigues(R)[0], t, self.K, d)
        return uv.reshape(-1, 2)

    def depth(self, pts):
        R, t = self.rvec_tvec()
        return (np.asarray(pts).reshape(-1, 3) @ R.T + t)[:, 2]

    def to_json(self):
        R, t = self.rvec_tvec()
        return {"K": self.K.round(4).tolist(), "dist": np.round(self.dist, 6).tolist(),
                "R_world_to_cam": R.round(6).tolist(), "t_world_to_cam": t.round(6).tolist(),
                "convention": "OpenCV pinhole; world metres, Z up, board top z=0, a1 at -x,-y"}


def look_at(eye, target, up):
    eye, target, up = (np.asarray(v, float) for v in (eye, target, up))
    z = eye - target
    z /= np.linalg.norm(z)
    x = np.cross(up, z)
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    P = np.eye(4)
    P[:3, 0], P[:3, 1], P[:3, 2], P[:3, 3] = x, y, z, eye
    return P


def place_camera(W, H, hfov, tilt, az, roll, target, fit_pts, fill, margin=0.03):
    """Camera at the given tilt/azimuth looking at target, rolled by `roll`, at the distance at
    which the points fit_pts fill the fraction `fill` of the image's shorter side."""
    f = (W / 2) / np.tan(hfov / 2)
    target = np.asarray(target, float)
    dirv = np.array([np.sin(tilt) * np.cos(az), np.sin(tilt) * np.sin(az), np.cos(tilt)])
    # "up" in the image: away from the camera on the ground, then rolled about the view axis
    up0 = -np.array([np.cos(az), np.sin(az), 0.0])
    view = -dirv
    c, s = np.cos(roll), np.sin(roll)
    up = up0 * c + np.cross(view, up0) * s + view * (view @ up0) * (1 - c)
    d = 1.0
    cam = None
    for _ in range(6):
        cam = Camera(W, H, f, W / 2, H / 2, look_at(target + d * dirv, target, up))
        uv = cam.project(fit_pts, distort=False)
        ext = max(np.ptp(uv[:, 0]) / W * (W / min(W, H)), np.ptp(uv[:, 1]) / H * (H / min(W, H)))
        # the board must also stay inside the image with a margin
        cen = uv.mean(0)
        span = np.max(np.abs(uv - cen), 0) * 2
        need = max(span[0] / (W * (1 - 2 * margin)), span[1] / (H * (1 - 2 * margin)))
        ratio = max(ext / fill, need)
        d *= ratio ** 0.9
    recentre(cam, fit_pts, margin)
    return cam


def recentre(cam, fit_pts, margin):
    """Shift the principal point so the points' projection is inside the frame."""
    W, H = cam.W, cam.H
    uv = cam.project(fit_pts, distort=False)
    lo, hi = uv.min(0), uv.max(0)
    shift = np.zeros(2)
    for k, n in ((0, W), (1, H)):
        if lo[k] < margin * n:
            shift[k] = margin * n - lo[k]
        elif hi[k] > (1 - margin) * n:
            shift[k] = (1 - margin) * n - hi[k]
    cam.cx += shift[0]
    cam.cy += shift[1]
    return cam


def sample_camera(rng, W, H, board_pts, centre, mode="frames"):
    """Random camera for the board whose outline is board_pts (world, Nx3)."""
    if mode == "overhead":  # for tests: straight down, no distortion
        cam = place_camera(W, H, np.radians(60), 0.0, 0.0, rng.uniform(0, 2 * np.pi), centre, board_pts, 0.85)
        return cam, {"tilt_deg": 0.0, "roll_deg": 0.0, "hfov_deg": 60.0}
    if mode == "frames":
        tilt = np.radians(35) * rng.beta(1.3, 2.0)
        roll = rng.uniform(0, 2 * np.pi)
        fill = rng.uniform(0.7, 1.0)
    else:  # clips: a fixed camera beside the table, White at the bottom or at a side
        tilt = np.radians(rng.uniform(0, 25))
        roll = rng.choice([0.0, np.pi / 2, -np.pi / 2], p=[0.6, 0.2, 0.2]) + np.radians(rng.normal(0, 4))
        fill = rng.uniform(0.7, 0.9)
    az = rng.uniform(0, 2 * np.pi)
    hfov = np.radians(rng.uniform(48, 78))
    tgt = np.asarray(centre, float) + np.r_[rng.normal(0, 0.02, 2), 0]
    cam = place_camera(W, H, hfov, tilt, az, roll, tgt, board_pts, fill)
    # real overhead cameras hang 0.65-1.3 m above the board (on a stand or the ceiling), out of the
    # players' way: where the sampled lens would put it lower, use a longer lens from higher up
    d_min = rng.uniform(0.65, 0.9)
    eye = cam.pose[:3, 3]
    d = float(np.linalg.norm(eye - tgt))
    if d < d_min:
        k = d_min / d
        cam.pose[:3, 3] = tgt + (eye - tgt) * k
        cam.f *= k
        cam.cx, cam.cy = W / 2, H / 2
        recentre(cam, board_pts, 0.03)
        hfov = 2 * np.arctan(W / 2 / cam.f)
    if rng.random() < 0.6:
        k1 = rng.uniform(-0.25, 0.04)
        cam.dist = np.array([k1, rng.uniform(-0.05, 0.08) * abs(k1) * 2, rng.normal(0, 0.0008),
                             rng.normal(0, 0.0008), 0.0])
    return cam, {"tilt_deg": float(np.degrees(tilt)), "roll_deg": float(np.degrees(roll) % 360),
                 "hfov_deg": float(np.degrees(hfov))}


_MAPS: dict = {}


def distortion_maps(cam: Camera):
    """Cached wrapper of _distortion_maps (clips use one camera for every frame)."""
    key = (cam.W, cam.H, round(cam.f, 6), round(cam.cx, 6), round(cam.cy, 6), tuple(np.round(cam.dist, 9)))
    if key not in _MAPS:
        if len(_MAPS) > 4:
            _MAPS.clear()
        _MAPS[key] = _distortion_maps(cam)
    return _MAPS[key]


def _distortion_maps(cam: Camera):
    """For the final image: remap tables into a padded undistorted render, and the pad.

    Returns (map_x, map_y, pad) such that final = remap(render_padded, map_x, map_y) where the
    padded render uses principal point (cx+pad, cy+pad) and size (W+2pad, H+2pad)."""
    if not np.any(cam.dist):
        return None, None, 0
    yy, xx = np.mgrid[0:cam.H, 0:cam.W].astype(np.float32)
    pts = np.stack([xx.ravel(), yy.ravel()], 1).reshape(-1, 1, 2)
    und = cv2.undistortPointsIter(pts, cam.K, cam.dist, None, cam.K,
                                  (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 20, 1e-4))
    und = und.reshape(cam.H, cam.W, 2)
    need = max(0.0, -und[..., 0].min(), und[..., 0].max() - cam.W, -und[..., 1].min(),
               und[..., 1].max() - cam.H)
    pad = int(np.ceil(min(need, 0.25 * max(cam.W, cam.H)))) + 2
    return (und[..., 0] + pad).astype(np.float32), (und[..., 1] + pad).astype(np.float32), pad
