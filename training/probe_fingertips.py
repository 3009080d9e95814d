"""Probe: do MediaPipe Hands' lite landmark model's fingertips find the touched piece in the
rendered clips? Measures, before anything relies on it (issue 41, "Fingertips").

    python probe_fingertips.py CLIP_DIR [CLIP_DIR ...]

For every third frame whose labels say a hand covers squares, the landmark model
(../shared/assets/hand-models-apache2/hand_landmark_lite.onnx, Apache-2.0) is run on a crop of
the original frame four squares wide, centred on the labelled cover (a stand-in for the board
model's hand map), at eight rotations, the most present kept. Prints how often a hand is found
(presence >= 0.5) and, over the occupied covered squares, how often the thumb, index or middle
fingertip lies within half a square of a square in labelled contact, against one not.
"""
import json, sys, os, cv2, numpy as np, onnxruntime as ort
MODEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'shared', 'assets', 'hand-models-apache2', 'hand_landmark_lite.onnx')
sess = ort.InferenceSession(MODEL)
S = 60; M = S // 2
dst = np.float32([[M, M], [M + 8 * S, M], [M + 8 * S, M + 8 * S], [M, M + 8 * S]])
def centre(sq):
    c = ord(sq[0]) - 97; r = int(sq[1]); return np.array([M + (c + 0.5) * S, M + (8 - r + 0.5) * S])
def run(img, ctr, size, ang):
    R = cv2.getRotationMatrix2D((float(ctr[0]), float(ctr[1])), ang, 224 / size); R[:, 2] += 112 - ctr
    crop = cv2.warpAffine(img, R, (224, 224))
    x = cv2.cvtColor(crop, cv2.COLOR_BGR2RGB).astype(np.float32)[None].transpose(0, 3, 1, 2) / 255
    lm, pres, _, _ = sess.run(None, {"input_1": x})
    return pres[0, 0], lm.reshape(21, 3), R
res = {"pos": [], "neg": [], "pres": []}
for clip in sys.argv[1:]:
    L = json.load(open(f"{clip}/labels.json"))
    Hi = cv2.getPerspectiveTransform(dst, np.float32(L["corners"])); H = np.linalg.inv(Hi)
    to_img = lambda p: (lambda v: v[:2] / v[2])(Hi @ np.array([p[0], p[1], 1.0]))
    to_b = lambda p: (lambda v: v[:2] / v[2])(H @ np.array([p[0], p[1], 1.0]))
    cap = cv2.VideoCapture(f"{clip}/clip.mp4")
    frames = L["frames"]; last_ang = None
    for i, f in enumerate(frames):
        ok, img = cap.read()
        if not ok: break
        if i % 3 or not f["covered"]: continue
        cov = f["covered"]
        pts = np.array([centre(s) for s in cov]); w = np.array(list(cov.values()))
        ctr_b = (pts * w[:, None]).sum(0) / w.sum(); ctr = to_img(ctr_b)
        sq_px = np.linalg.norm(to_img(ctr_b + [S, 0]) - ctr)
        best = max((run(img, ctr, 4 * sq_px, a) + (a,) for a in range(0, 360, 45)), key=lambda r: r[0])
        pres, lm, R, ang = best
        res["pres"].append(pres)
        if pres < 0.5: continue
        Ri = cv2.invertAffineTransform(R)
        tips = [to_b(Ri @ np.array([lm[k, 0], lm[k, 1], 1])) for k in (4, 8, 12)]
        occupied = [s for s in cov if f["pieces"][(8 - int(s[1])) * 8 + ord(s[0]) - 97] != "."] if len(f["pieces"]) == 64 else list(cov)
        for s in occupied:
            d = min(np.linalg.norm(t - centre(s)) for t in tips) / S
            res["pos" if s in f["contact"] else "neg"].append(d)
    print(clip, len(res["pres"]), flush=True)
p = np.array(res["pres"]); print("frames", len(p), "presence>=0.5", (p >= 0.5).mean())
for k in ("pos", "neg"):
    d = np.array(res[k]); print(k, len(d), "tip within 0.5 sq", (d < 0.5).mean() if len(d) else None, "median", np.median(d) if len(d) else None)
