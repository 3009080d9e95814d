"""The board model's data side: square order, orientation and augmentations that keep the
labels on their squares. (The training loop itself needs torch and is not run here.)"""

import cv2
import numpy as np
import pytest

from board_model.cache import fen_classes, split_of
from board_model.geometry import CELLS, MARGIN, SIZE, SQUARE, board_points, rotate_corners, warp

from board_model.augment import augment


def test_fen_classes_read_rank_eight_first():
    c = fen_classes("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1")
    assert c[0] == 10 and c[4] == 12  # a8 black rook, e8 black king
    assert c[60] == 6 and c[63] == 4  # e1 white king, h1 white rook
    assert (c[16:48] == 0).all()


def test_warp_puts_a8_top_left():
    p = board_points()
    assert p[0].tolist() == [MARGIN, MARGIN] and p[2].tolist() == [SIZE - MARGIN, SIZE - MARGIN]
    assert SIZE == 8 * SQUARE + 2 * MARGIN and SIZE // 8 == CELLS


def test_warp_fades_where_the_image_ends():
    # An image that is the playing area only, as a recording already cut to the board: the
    # margin replicates its edge for a quarter square, then fades to grey (as touchmove does).
    image = np.full((384, 384, 3), 200, np.uint8)
    board = warp(image, [[0, 0], [384, 0], [384, 384], [0, 384]], cv2.INTER_LINEAR)
    assert board[216, 216, 0] == 200 and board[20, 216, 0] == 200 and board[216, 20, 0] == 200
    assert board[216, 0, 0] == 110 and board[431, 216, 0] == 110 and board[0, 0, 0] == 110
    assert 130 < board[6, 216, 0] < 180
    # A mask is not faded; an image with surroundings keeps them.
    assert (warp(image[..., 0], [[0, 0], [384, 0], [384, 384], [0, 384]], cv2.INTER_NEAREST, fade=False) == 200).all()
    wide = np.full((484, 484, 3), 50, np.uint8)
    wide[50:434, 50:434] = 200
    board = warp(wide, [[50, 50], [434, 50], [434, 434], [50, 434]], cv2.INTER_LINEAR)
    assert board[216, 216, 0] == 200 and board[216, 0, 0] == 50 and board[0, 0, 0] == 50


def test_rotating_corners_relabels_them():
    tl, tr, br, bl = "tl", "tr", "br", "bl"
    assert rotate_corners([tl, tr, br, bl], 1) == [tr, br, bl, tl]
    assert rotate_corners([tl, tr, br, bl], 4) == [tl, tr, br, bl]


def test_held_out_split_is_a_function_of_the_name():
    assert split_of("afka2d", "IMG_4707.jpg") == split_of("afka2d", "IMG_4707.jpg")
    names = [f"{i}.jpg" for i in range(300)]
    held = sum(split_of("x", n) == "test" for n in names)
    assert 70 < held < 130


def marked(square):
    """An image with one bright square, its class label, and a hand map marked near it."""
    image = np.zeros((SIZE, SIZE, 3), np.uint8)
    r, f = divmod(square, 8)
    image[MARGIN + r * SQUARE + 8: MARGIN + (r + 1) * SQUARE - 8, MARGIN + f * SQUARE + 8: MARGIN + (f + 1) * SQUARE - 8] = 250
    classes = np.zeros(64, np.int8)
    classes[square] = 1
    return image, classes


@pytest.mark.parametrize("seed", range(12))
def test_augmentations_keep_labels_on_their_squares(seed):
    rng = np.random.default_rng(seed)
    image, classes = marked(9)  # b7
    hands = np.zeros((2, CELLS, CELLS), np.float32)
    hands[0, CELLS - 1, 5] = 1.0  # a White arm at the bottom edge
    for has_hands in (True, False):
        out, cls, cov, con, h = augment(rng, image, classes, np.zeros(64, np.float32), np.zeros(64, bool), hands, has_hands)
        lum = out.mean(axis=2)
        brightest = max(range(64), key=lambda s: lum[MARGIN + (s // 8) * SQUARE + 12: MARGIN + (s // 8 + 1) * SQUARE - 12, MARGIN + (s % 8) * SQUARE + 12: MARGIN + (s % 8 + 1) * SQUARE - 12].mean())
        assert cls[brightest] == 1 and cls.sum() == 1
        if has_hands:
            # the arm stays at its owner's edge: White's at the bottom, or swapped to Black's map at the top
            row = np.argwhere(h.sum(axis=0) > 0)[0][0]
            assert (h[0].sum() > 0 and row == CELLS - 1) or (h[1].sum() > 0 and row == 0)
