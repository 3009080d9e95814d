"""Training-time augmentations of a warped board and its labels: geometry that keeps every label
on its square (and each hand with its owner's edge), calibration error, light and camera."""

import cv2
import numpy as np

from .geometry import MARGIN, SIZE, SQUARE


def grid(a):
    """[64] in FEN reading order -> [8, 8] (row 0 = rank 8)."""
    return a.reshape(8, 8)


def augment(rng, image, classes, cover, contact, hands, has_hands):
    """A randomly transformed copy of one example; the labels follow the geometry."""
    classes, cover, contact = grid(classes), grid(cover), grid(contact)
    if has_hands:
        # Hands' owners are defined by the board edge their arms come from (White at the
        # bottom), so only mirror left-right, or turn half round swapping the owners.
        if rng.random() < 0.5:
            image, classes, cover, contact, hands = image[:, ::-1], classes[:, ::-1], cover[:, ::-1], contact[:, ::-1], hands[:, :, ::-1]
        if rng.random() < 0.5:
            image, classes, cover, contact = image[::-1, ::-1], classes[::-1, ::-1], cover[::-1, ::-1], contact[::-1, ::-1]
            hands = hands[::-1, ::-1, ::-1]
    else:
        k = int(rng.integers(4))
        image, classes = np.rot90(image, k), np.rot90(classes, k)
        if rng.random() < 0.5:
            image, classes = image[:, ::-1], classes[:, ::-1]
    image = np.ascontiguousarray(image)
    # calibration error: the corners off by up to 1/8 square each
    lo, hi = MARGIN, MARGIN + 8 * SQUARE
    src = np.float32([[lo, lo], [hi, lo], [hi, hi], [lo, hi]])
    dst = src + rng.uniform(-6, 6, (4, 2)).astype(np.float32)
    image = cv2.warpPerspective(image, cv2.getPerspectiveTransform(src, dst), (SIZE, SIZE), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    # light, white balance, camera
    x = image.astype(np.float32)
    x *= rng.uniform(0.8, 1.2, 3).astype(np.float32)
    mean = x.mean()
    x = (x - mean) * rng.uniform(0.65, 1.35) + mean + rng.uniform(-35, 35)
    if rng.random() < 0.25:
        grey = x.mean(axis=2, keepdims=True)
        x = grey + (x - grey) * rng.uniform(0.0, 0.7)
    x = 255.0 * (np.clip(x, 0, 255) / 255.0) ** rng.uniform(0.7, 1.4)
    if rng.random() < 0.3:
        x = cv2.GaussianBlur(x, (0, 0), rng.uniform(0.4, 1.5))
    if rng.random() < 0.5:
        x += rng.normal(0, rng.uniform(1, 7), x.shape).astype(np.float32)
    image = np.clip(x, 0, 255).astype(np.uint8)
    if rng.random() < 0.3:
        ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(35, 95))])
        image = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return image, classes.reshape(64), cover.reshape(64), contact.reshape(64), np.ascontiguousarray(hands)
