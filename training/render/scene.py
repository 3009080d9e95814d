"""The 3D scene: table, board, pieces, distractors, lights, hands; rendering and geometry labels.

World: metres, Z up, board top at z = 0, board centre at the origin, a1 at (-3.5 s, -3.5 s),
h8 at (+3.5 s, +3.5 s) where s is the square side. White sits at -Y, Black at +Y.
"""
from __future__ import annotations

import atexit

import numpy as np
import pyrender
import trimesh
from scipy.spatial import cKDTree

from . import textures
from .assets import KINDS, PIECE_COLOURS, PIECE_SETS, piece_set, surface_points, surface_tree
from .camera import Camera, distortion_maps
from .hand import SKIN_TONES, SLEEVE_COLOURS, ArmGeometry

FILES = "abcdefgh"
SQUARES = [f + r for r in "87654321" for f in FILES]  # label order: a8, b8, ..., h8, a7, ..., h1
CONTACT_MM = 3.0  # a hand is "in contact" with a piece when the meshes are closer than this


def srgb2lin(c):
    c = np.asarray(c, float)
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def sq_xy(sq: str, s: float) -> np.ndarray:
    return np.array([(ord(sq[0]) - 97 - 3.5) * s, (int(sq[1]) - 1 - 3.5) * s])


def sq_corners(sq: str, s: float) -> np.ndarray:
    c = sq_xy(sq, s)
    h = s / 2
    return np.array([[c[0] - h, c[1] + h, 0], [c[0] + h, c[1] + h, 0], [c[0] + h, c[1] - h, 0],
                     [c[0] - h, c[1] - h, 0]])


def playing_corners(s: float) -> np.ndarray:
    """World corners of the 8x8 playing area in label order a8, h8, h1, a1."""
    h = 4 * s
    return np.array([[-h, h, 0], [h, h, 0], [h, -h, 0], [-h, -h, 0]], float)


def _mat(rgb_srgb, rough=0.5, metal=0.0, tex=None, alpha=1.0):
    kw = {}
    if tex is not None:
        kw["baseColorTexture"] = pyrender.Texture(source=tex, source_channels="RGB")
    c = list(srgb2lin(rgb_srgb)) + [alpha]
    return pyrender.MetallicRoughnessMaterial(baseColorFactor=c, metallicFactor=metal,
                                              roughnessFactor=rough, **kw)


def _textured_quad(w, h, z, img, uv_scale=1.0, rough=0.6):
    V = np.array([[-w / 2, -h / 2, z], [w / 2, -h / 2, z], [w / 2, h / 2, z], [-w / 2, h / 2, z]])
    # texture row 0 is the far (+Y) edge: pyrender samples row 0 at v = 1
    UV = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], float) * uv_scale
    F = np.array([[0, 1, 2], [0, 2, 3]])
    N = np.tile([0, 0, 1.0], (4, 1))
    prim = pyrender.Primitive(positions=V, normals=N, texcoord_0=UV, indices=F,
                              material=_mat((1, 1, 1), rough, tex=img))
    return pyrender.Mesh([prim])


def _box(ext, centre, colour, rough=0.6):
    m = trimesh.creation.box(ext)
    m.apply_translation(centre)
    return pyrender.Mesh.from_trimesh(m, material=_mat(colour, rough), smooth=False)


def _cyl(r, h, centre, colour, rough=0.5, sections=28):
    m = trimesh.creation.cylinder(radius=r, height=h, sections=sections)
    m.apply_translation(centre)
    return m, _mat(colour, rough)


class Style(dict):
    """A sampled appearance (all JSON-serialisable): board, pieces, table, lights, distractors."""


def sample_style(rng: np.random.Generator) -> Style:
    st = Style()
    st["square"] = float(rng.uniform(0.045, 0.062))
    st["board"] = str(rng.choice(textures.BOARD_STYLES))
    st["coords"] = bool(rng.random() < 0.7)
    st["border"] = float(rng.uniform(0.03, 0.11) if st["board"].startswith(("vinyl", "rollup", "print"))
                         else rng.uniform(0.02, 0.09))
    st["thick"] = float(0.0015 if st["board"].startswith(("rollup", "print")) else rng.uniform(0.008, 0.03))
    st["table"] = str(rng.choice(textures.TABLE_STYLES))
    st["pieces"] = str(rng.choice(PIECE_SETS, p=[0.25, 0.25, 0.2, 0.15, 0.15]))
    ci = int(rng.integers(len(PIECE_COLOURS)))
    name, w, b, rr = PIECE_COLOURS[ci]
    jit = lambda c: list(np.clip(np.array(c) * rng.uniform(0.9, 1.08, 3), 0, 1))  # noqa: E731
    st["piece_colours"] = {"name": name, "w": jit(w), "b": jit(b), "rough": float(rng.uniform(*rr))}
    st["piece_scale"] = float(rng.uniform(0.9, 1.05))
    st["board_rough"] = float(rng.uniform(0.35, 0.85))
    # lights
    kind = str(rng.choice(["tubes", "window", "spot", "mixed"], p=[0.35, 0.25, 0.2, 0.2]))
    temp = rng.uniform(-1, 1)
    tint = list(np.clip([1 + 0.12 * temp, 1.0, 1 - 0.15 * temp], 0.7, 1.2))
    st["light"] = {"kind": kind, "tint": tint, "ambient": float(rng.uniform(0.15, 0.5)),
                   "az": float(rng.uniform(0, 2 * np.pi)),
                   "elev": float(rng.uniform(np.radians(35), np.radians(80)) if kind == "window"
                                 else rng.uniform(np.radians(60), np.radians(90))),
                   "intensity": float(rng.uniform(1.4, 3.0)),
                   "n_fill": int(rng.integers(1, 4)), "seed": int(rng.integers(1 << 30))}
    st["distractors"] = {"clock": bool(rng.random() < 0.7), "scoresheets": bool(rng.random() < 0.6),
                         "pen": bool(rng.random() < 0.5), "cup": bool(rng.random() < 0.35),
                         "captured": bool(rng.random() < 0.6), "side": float(rng.choice([-1.0, 1.0])),
                         "seed": int(rng.integers(1 << 30))}
    st["tex_seed"] = int(rng.integers(1 << 30))
    return st


class PieceInst:
    __slots__ = ("id", "letter", "sq", "xy", "yaw", "pose", "held_by", "toppled")

    def __init__(self, id, letter, sq, xy, yaw):
        self.id, self.letter, self.sq, self.xy, self.yaw = id, letter, sq, np.asarray(xy, float), yaw
        self.pose = None  # explicit 4x4 world pose (for held/toppled pieces); None = standing
        self.held_by = None
        self.toppled = False


class HandInst:
    """One hand+arm instance in the scene, with materials."""

    def __init__(self, hid: str, geom: ArmGeometry, skin, sleeve, value: int):
        self.hid, self.geom, self.skin, self.sleeve, self.value = hid, geom, skin, sleeve, value


class BoardScene:
    def __init__(self, style: Style, W: int = 640, H: int = 480):
        self.style = style
        self.W, self.H = W, H
        self.s = style["square"]
        self.scale = self.s * style["piece_scale"]
        self.set_name = style["pieces"]
        self.meshes = piece_set(self.set_name)
        self.scene = pyrender.Scene(ambient_light=np.array(style["light"]["tint"]) * style["light"]["ambient"] * 0.35,
                                    bg_color=[0.3, 0.3, 0.3, 1.0])
        self.static_nodes = []
        self.piece_nodes: dict[int, pyrender.Node] = {}
        self.pieces: dict[int, PieceInst] = {}
        self.hands: list[HandInst] = []
        self.hand_nodes: list[tuple[pyrender.Node, int]] = []
        self._build_static()
        self._piece_meshes = {}

    # ------------------------------------------------------------------ static scene
    def _build_static(self):
        st, s = self.style, self.s
        rng = np.random.default_rng(st["tex_seed"])
        tex = textures.board_texture(rng, st["board"], st["coords"], res=768, border_frac=st["border"])
        total = 8 * s / (1 - 2 * st["border"])
        self.board_total = total
        add = lambda m, pose=np.eye(4): self.static_nodes.append(self.scene.add(m, pose=pose))  # noqa: E731
        add(_textured_quad(total, total, 0.0, tex, rough=st["board_rough"]))
        side_col = (0.25, 0.15, 0.08) if st["board"].startswith("wood") else (0.8, 0.8, 0.78)
        add(_box([total, total, st["thick"]], [0, 0, -st["thick"] / 2 - 0.0002], side_col))
        ttex = textures.table_texture(rng, st["table"], res=384)
        self.table_z = -st["thick"]
        add(_textured_quad(2.4, 2.4, self.table_z, ttex, uv_scale=4.5, rough=0.7))
        self._add_distractors()
        self._add_lights()

    def _add_lights(self):
        L = self.style["light"]
        rng = np.random.default_rng(L["seed"])
        tint = np.array(L["tint"])
        az, el = L["az"], L["elev"]
        d = np.array([np.cos(az) * np.cos(el), np.sin(az) * np.cos(el), np.sin(el)])
        inten = L["intensity"]
        self.main_is_spot = L["kind"] in ("spot",)
        if self.main_is_spot:
            pos = d * rng.uniform(1.2, 2.0)
            light = pyrender.SpotLight(color=tint, intensity=inten * np.dot(pos, pos),
                                       innerConeAngle=0.3, outerConeAngle=0.9)
        else:
            pos = d
            light = pyrender.DirectionalLight(color=tint, intensity=inten)
        from .camera import look_at
        up = np.array([0, 1.0, 0]) if abs(d[2]) > 0.99 else np.array([0, 0, 1.0])
        self.static_nodes.append(self.scene.add(light, pose=look_at(pos, [0, 0, 0], up)))
        for i in range(L["n_fill"]):
            p = np.r_[rng.uniform(-1.2, 1.2, 2), rng.uniform(1.0, 2.2)]
            c = tint * rng.uniform(0.85, 1.1, 3)
            k = rng.uniform(0.25, 0.9) * (1.0 if L["kind"] in ("tubes", "mixed") else 0.5)
            pl = pyrender.PointLight(color=c, intensity=k * np.dot(p, p))
            self.static_nodes.append(self.scene.add(pl, pose=trimesh.transformations.translation_matrix(p)))

    def _add_distractors(self):
        D = self.style["distractors"]
        rng = np.random.default_rng(D["seed"])
        s, half = self.s, self.board_total / 2
        side = D["side"]
        z0 = self.table_z
        self.clock_buttons = {}
        parts = []
        if D["clock"]:
            cx = side * (half + rng.uniform(0.08, 0.14))
            cy = rng.normal(0, 0.02)
            w, dp, h = 0.18, rng.uniform(0.08, 0.11), rng.uniform(0.05, 0.08)
            body = rng.choice([(0.08, 0.08, 0.09), (0.35, 0.22, 0.12), (0.7, 0.7, 0.7), (0.1, 0.1, 0.3)])
            yaw = np.pi / 2 + rng.normal(0, 0.08)
            T = trimesh.transformations.rotation_matrix(yaw, [0, 0, 1], [cx, cy, 0])
            m = trimesh.creation.box([w, dp, h])
            m.apply_translation([cx, cy, z0 + h / 2])
            m.apply_transform(T)
            parts.append((m, _mat(body, 0.5)))
            for k, sx in ((0, -1), (1, 1)):
                # the button on White's side (-Y) is pressed by White
                b = trimesh.creation.cylinder(radius=0.012, height=0.014)
                pos = np.array([cx + sx * w * 0.28, cy, z0 + h + 0.007, 1.0])
                b.apply_translation(pos[:3])
                b.apply_transform(T)
                parts.append((b, _mat(rng.choice([(0.8, 0.1, 0.1), (0.1, 0.1, 0.1), (0.9, 0.9, 0.9)]), 0.4)))
                bp = (T @ pos)[:3]
                self.clock_buttons["w" if bp[1] < cy else "b"] = bp + np.array([0, 0, 0.007])
                face = trimesh.creation.box([w * 0.38, 0.004, h * 0.55])
                face.apply_translation([cx + sx * w * 0.23, cy - dp / 2 - 0.002, z0 + h * 0.55])
                face.apply_transform(T)
                parts.append((face, _mat((0.75, 0.78, 0.7), 0.3)))
        if D["scoresheets"]:
            for sgn in (-1, 1):
                if rng.random() < 0.3:
                    continue
                img = textures.scoresheet_texture(rng)
                q = _textured_quad(0.15, 0.21, 0, img, rough=0.9)
                T = trimesh.transformations.rotation_matrix(rng.normal(0, 0.25) + (np.pi if sgn > 0 else 0),
                                                            [0, 0, 1])
                T[:3, 3] = [rng.uniform(-half, half) * 0.8, sgn * (half + rng.uniform(0.05, 0.14)), z0 + 0.0008]
                self.static_nodes.append(self.scene.add(q, pose=T))
        if D["pen"]:
            m = trimesh.creation.cylinder(radius=0.0045, height=0.14, sections=12)
            m.apply_transform(trimesh.transformations.rotation_matrix(np.pi / 2, [0, 1, 0]))
            m.apply_transform(trimesh.transformations.rotation_matrix(rng.uniform(0, np.pi), [0, 0, 1]))
            m.apply_translation([rng.uniform(-half, half), rng.choice([-1, 1]) * (half + rng.uniform(0.03, 0.12)),
                                 z0 + 0.0045])
            parts.append((m, _mat(rng.choice([(0.05, 0.05, 0.3), (0.05, 0.05, 0.05), (0.8, 0.8, 0.8)]), 0.3)))
        if D["cup"]:
            r = rng.uniform(0.035, 0.045)
            h = rng.uniform(0.08, 0.11)
            c = np.array([-side * (half + rng.uniform(0.06, 0.12)), rng.uniform(-half, half), z0 + h / 2])
            m = trimesh.creation.cylinder(radius=r, height=h, sections=32)
            m.apply_translation(c)
            parts.append((m, _mat(rng.choice([(0.9, 0.9, 0.88), (0.7, 0.15, 0.1), (0.15, 0.2, 0.4)]), 0.25)))
            top = trimesh.creation.cylinder(radius=r * 0.88, height=0.002, sections=32)
            top.apply_translation(c + [0, 0, h / 2 - 0.008])
            parts.append((top, _mat((0.16, 0.08, 0.04), 0.1)))
            ring = trimesh.creation.annulus(r_min=0.015, r_max=0.02, height=0.008)
            ring.apply_transform(trimesh.transformations.rotation_matrix(np.pi / 2, [1, 0, 0]))
            ring.apply_translation(c + [r + 0.012, 0, 0.01])
            parts.append((ring, _mat((0.9, 0.9, 0.88), 0.25)))
        for m, mat in parts:
            self.static_nodes.append(self.scene.add(pyrender.Mesh.from_trimesh(m, material=mat, smooth=False)))

    # ------------------------------------------------------------------ pieces
    def _piece_mesh(self, letter):
        key = letter
        if key not in self._piece_meshes:
            pc = self.style["piece_colours"]
            col = pc["w"] if letter.isupper() else pc["b"]
            smooth = not self.set_name.startswith("cc")
            mat = _mat(col, pc["rough"])
            self._piece_meshes[key] = pyrender.Mesh.from_trimesh(self.meshes[letter.lower()], material=mat,
                                                                 smooth=smooth)
        return self._piece_meshes[key]

    def standing_pose(self, xy, yaw, z=0.0):
        T = trimesh.transformations.rotation_matrix(yaw, [0, 0, 1])
        T[:3, :3] *= self.scale
        T[:3, 3] = [xy[0], xy[1], z]
        return T

    def piece_world_pose(self, p: PieceInst):
        return p.pose if p.pose is not None else self.standing_pose(p.xy, p.yaw)

    def add_piece(self, letter, sq=None, xy=None, yaw=0.0) -> PieceInst:
        pid = len(self.pieces) + 1000 * 0
        while pid in self.pieces:
            pid += 1
        if xy is None:
            xy = sq_xy(sq, self.s)
        p = PieceInst(pid, letter, sq, xy, yaw)
        self.pieces[pid] = p
        self.piece_nodes[pid] = self.scene.add(self._piece_mesh(letter), pose=self.piece_world_pose(p))
        return p

    def update_piece(self, p: PieceInst):
        self.scene.set_pose(self.piece_nodes[p.id], self.piece_world_pose(p))

    def remove_piece(self, p: PieceInst):
        self.scene.remove_node(self.piece_nodes.pop(p.id))
        del self.pieces[p.id]

    def piece_points_world(self, p: PieceInst):
        pts = surface_points(self.set_name, p.letter.lower())
        T = self.piece_world_pose(p)
        return pts @ T[:3, :3].T + T[:3, 3]

    def piece_trimesh_world(self, p: PieceInst):
        m = self.meshes[p.letter.lower()].copy()
        m.apply_transform(self.piece_world_pose(p))
        return m

    def piece_height(self, letter):
        return float(self.meshes[letter.lower()].bounds[1][2] * self.scale)

    # ------------------------------------------------------------------ hands
    def set_hands(self, hands: list[HandInst]):
        for n, _ in self.hand_nodes:
            self.scene.remove_node(n)
        self.hand_nodes = []
        self.hands = hands
        for h in hands:
            skin_mat = _mat(h.skin, 0.55)
            for i, m in enumerate(h.geom.skin_meshes()):
                node = self.scene.add(pyrender.Mesh.from_trimesh(m, material=skin_mat, smooth=(i == 0)))
                self.hand_nodes.append((node, h.value if i == 0 else 64 + h.value))
            if h.geom.sleeve is not None:
                node = self.scene.add(pyrender.Mesh.from_trimesh(h.geom.sleeve, material=_mat(h.sleeve, 0.85),
                                                                 smooth=True))
                self.hand_nodes.append((node, 128 + h.value))

    # ------------------------------------------------------------------ rendering
    def _renderer(self, W, H):
        """One EGL context per process, shared by all scenes; resized in place."""
        global _RENDERER
        if _RENDERER is None:
            _RENDERER = pyrender.OffscreenRenderer(W, H)
            atexit.register(_release_renderer)
        _RENDERER.viewport_width, _RENDERER.viewport_height = W, H
        return _RENDERER

    def render(self, cam: Camera, seg_pieces=False):
        """Render colour and segmentation in the final (distorted) image geometry.

        Returns dict: color (H,W,3 uint8), mask (H,W uint8: hand instance values), seg_und
        (padded undistorted hand mask), pad, and piece_seg (H,W int32 piece ids, only if
        seg_pieces; in the undistorted padded frame)."""
        mx, my, pad = distortion_maps(cam)
        Wp, Hp = cam.W + 2 * pad, cam.H + 2 * pad
        pc = pyrender.IntrinsicsCamera(cam.f, cam.f, cam.cx + pad, cam.cy + pad, znear=0.02, zfar=10.0)
        cn = self.scene.add(pc, pose=cam.pose)
        r = self._renderer(Wp, Hp)
        flags = pyrender.RenderFlags.SHADOWS_SPOT if self.main_is_spot else pyrender.RenderFlags.SHADOWS_DIRECTIONAL
        color, _ = r.render(self.scene, flags=flags)
        segmap = {}
        for n in self.scene.mesh_nodes:
            segmap[n] = (0, 0, 0)
        for n, v in self.hand_nodes:
            segmap[n] = (v, 0, 0)
        if self.hand_nodes:
            seg, _ = r.render(self.scene, flags=pyrender.RenderFlags.SEG, seg_node_map=segmap)
            hand_und = seg[..., 0].copy()
        else:
            hand_und = np.zeros(color.shape[:2], np.uint8)
        piece_seg = None
        if seg_pieces:
            for n in self.scene.mesh_nodes:
                segmap[n] = (0, 0, 0)
            for pid, n in self.piece_nodes.items():
                segmap[n] = ((pid + 1) % 256, (pid + 1) // 256, 1)
            ps, _ = r.render(self.scene, flags=pyrender.RenderFlags.SEG, seg_node_map=segmap)
            piece_seg = np.where(ps[..., 2] > 0, ps[..., 0].astype(np.int32) + 256 * ps[..., 1].astype(np.int32) - 1, -1)
        self.scene.remove_node(cn)
        piece_seg_final = piece_seg
        if pad:
            import cv2
            color = cv2.remap(color, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
            mask = cv2.remap(hand_und, mx, my, cv2.INTER_NEAREST, borderMode=cv2.BORDER_REPLICATE)
            if piece_seg is not None:
                piece_seg_final = cv2.remap(piece_seg.astype(np.float32), mx, my, cv2.INTER_NEAREST,
                                            borderMode=cv2.BORDER_CONSTANT, borderValue=-1).astype(np.int32)
        else:
            mask = hand_und
        return {"color": color, "mask": mask, "seg_und": hand_und, "pad": pad, "piece_seg": piece_seg,
                "piece_seg_final": piece_seg_final}

    # ------------------------------------------------------------------ labels
    def square_coverage(self, cam: Camera, seg_und: np.ndarray, pad: int) -> np.ndarray:
        """Fraction of each square's (undistorted) image quad covered by a visible hand/arm.
        Order: SQUARES (a8..h1)."""
        import cv2
        cov = np.zeros(64)
        hand = (seg_und > 0).astype(np.uint8)
        if not hand.any():
            return cov
        Hh, Ww = seg_und.shape
        for i, sq in enumerate(SQUARES):
            uv = cam.project(sq_corners(sq, self.s), distort=False) + pad
            x0, y0 = np.floor(uv.min(0)).astype(int)
            x1, y1 = np.ceil(uv.max(0)).astype(int) + 1
            x0c, y0c, x1c, y1c = max(x0, 0), max(y0, 0), min(x1, Ww), min(y1, Hh)
            if x1c <= x0c or y1c <= y0c:
                continue
            sub = hand[y0c:y1c, x0c:x1c]
            if not sub.any():
                continue
            poly = np.zeros((y1 - y0, x1 - x0), np.uint8)
            cv2.fillConvexPoly(poly, np.round((uv - [x0, y0]) * 16).astype(np.int32), 1, cv2.LINE_8, 4)
            poly = poly[y0c - y0:y1c - y0, x0c - x0:x1c - x0]
            area = poly.sum()
            if area > 0:
                cov[i] = float((sub & poly).sum()) / float(area)
        return cov

    def hand_piece_distances(self, hands=None):
        """{hand hid: {piece id: min distance in metres}} between dense hand-skin samples and
        piece surface samples (only pieces within reach are measured)."""
        out = {}
        cap = 0.05
        for h in hands if hands is not None else self.hands:
            pts = dense_hand_points(h.geom)
            lo, hi = pts.min(0) - cap, pts.max(0) + cap
            dd = {}
            for pid, p in self.pieces.items():
                if p.held_by == h.hid:
                    continue
                T = self.piece_world_pose(p)
                c = T[:3, 3]
                rad = self.s * 1.2
                if np.any(c[:2] + rad < lo[:2]) or np.any(c[:2] - rad > hi[:2]) or c[2] > hi[2]:
                    continue
                # query the hand samples in the piece's own frame against its cached tree
                Tinv = np.linalg.inv(T)
                sc = float(np.cbrt(np.linalg.det(T[:3, :3])))
                tree = surface_tree(self.set_name, p.letter.lower())
                loc = pts @ Tinv[:3, :3].T + Tinv[:3, 3]
                lo_l, hi_l = tree.mins - cap / sc, tree.maxes + cap / sc
                sub = loc[np.all((loc > lo_l) & (loc < hi_l), axis=1)]
                if len(sub) == 0:
                    continue
                d, _ = tree.query(sub, k=1, distance_upper_bound=cap / sc)
                dd[pid] = float(min(np.min(d) * sc, cap))
            out[h.hid] = dd
        return out


_SAMPLES = {}
_RENDERER = None


def _release_renderer():
    global _RENDERER
    if _RENDERER is not None:
        try:
            _RENDERER.delete()
        except Exception:  # noqa: BLE001 - EGL teardown at exit is best effort
            pass
        _RENDERER = None


def dense_hand_points(geom: ArmGeometry, n=6000):
    """Hand skin surface samples (fixed barycentric samples of the posed mesh) + vertices."""
    m = geom.hand
    key = len(m.faces)
    if key not in _SAMPLES:
        rng = np.random.default_rng(0)
        areas = trimesh.Trimesh(m.vertices, m.faces, process=False).area_faces
        fi = rng.choice(len(m.faces), n, p=areas / areas.sum())
        b = rng.dirichlet([1, 1, 1], n)
        _SAMPLES[key] = (fi, b)
    fi, b = _SAMPLES[key]
    tri = m.vertices[m.faces[fi]]
    pts = np.einsum("nk,nkd->nd", b, tri)
    return np.vstack([pts, m.vertices])


def sample_skin(rng):
    base = np.array(SKIN_TONES[int(rng.integers(len(SKIN_TONES)))])
    return list(np.clip(base * rng.uniform(0.92, 1.08, 3), 0, 1))


def sample_sleeve(rng):
    base = np.array(SLEEVE_COLOURS[int(rng.integers(len(SLEEVE_COLOURS)))])
    return list(np.clip(base * rng.uniform(0.85, 1.15, 3), 0, 1))


__all__ = ["BoardScene", "Style", "sample_style", "SQUARES", "sq_xy", "sq_corners", "playing_corners",
           "HandInst", "KINDS", "CONTACT_MM", "sample_skin", "sample_sleeve", "dense_hand_points"]
