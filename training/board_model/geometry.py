"""The canonical top-down board every image is warped to before the model sees it.

Kept in step with the Rust side (`board::Layout { square: 48, margin: 24 }`): a8 at the top left,
White at the bottom, 48 px a square and half a square of margin, so 432 x 432 pixels. The hand
map is a grid of 8 px cells over the whole warp: 54 x 54, 6 cells a square, 3 cells of margin.
"""

import cv2
import numpy as np

SQUARE = 48
MARGIN = 24
SIZE = 8 * SQUARE + 2 * MARGIN  # 432
CELL = 8
CELLS = SIZE // CELL  # 54


def board_points():
    """Where the playing area's corners a8, h8, h1, a1 land in the warp."""
    lo, hi = MARGIN, MARGIN + 8 * SQUARE
    return np.float32([[lo, lo], [hi, lo], [hi, hi], [lo, hi]])


def homography(corners_a8_h8_h1_a1):
    """The image-to-warp homography from the playing area's corners (a8, h8, h1, a1)."""
    return cv2.getPerspectiveTransform(np.float32(corners_a8_h8_h1_a1), board_points())


# The grey the warp fades to where the image has no picture (touchmove's `board::Warper`).
NO_PICTURE = 110.0


def warp(image, corners_a8_h8_h1_a1, interpolation=cv2.INTER_AREA, fade=True):
    """The image warped to the canonical board (INTER_AREA antialiases large photos). As
    touchmove warps frames, where the warp reaches outside the image it replicates the image's
    edge for a quarter square, then fades to a flat grey over the next quarter (`fade=False` for
    label masks, which replicate)."""
    h = homography(corners_a8_h8_h1_a1)
    board = cv2.warpPerspective(image, h, (SIZE, SIZE), flags=interpolation, borderMode=cv2.BORDER_REPLICATE)
    if not fade:
        return board
    picture = np.full(image.shape[:2], 255, np.uint8)
    seen = cv2.warpPerspective(picture, h, (SIZE, SIZE), flags=cv2.INTER_NEAREST, borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    if seen.all():
        return board
    distance = cv2.distanceTransform(255 - seen, cv2.DIST_L2, cv2.DIST_MASK_PRECISE)
    grey = np.clip(distance / (SQUARE / 4) - 1.0, 0.0, 1.0)
    if board.ndim == 3:
        grey = grey[..., None]
    return np.uint8(np.round(board * (1.0 - grey) + NO_PICTURE * grey))


def rotate_corners(corners, quarter_turns):
    """The same four image points, relabelled as if the board were turned by quarter turns."""
    return [corners[(i + quarter_turns) % 4] for i in range(4)]
