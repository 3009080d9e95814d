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


def warp(image, corners_a8_h8_h1_a1, interpolation=cv2.INTER_AREA):
    """The image warped to the canonical board (INTER_AREA antialiases large photos)."""
    h = homography(corners_a8_h8_h1_a1)
    return cv2.warpPerspective(image, h, (SIZE, SIZE), flags=interpolation, borderMode=cv2.BORDER_REPLICATE)


def rotate_corners(corners, quarter_turns):
    """The same four image points, relabelled as if the board were turned by quarter turns."""
    return [corners[(i + quarter_turns) % 4] for i in range(4)]
