"""The board network: one pass over the warped board gives, per square, the piece class, the
fraction a hand covers and whether a hand touches the piece, and a coarse map of each player's
hands. About 0.2 GMAC a frame, small enough for every frame of a live camera on two CPU cores.

Input: uint8 [N, 432, 432, 3] in BGR (as OpenCV decodes), the board warped a8 top-left, White
at the bottom, 48 px a square plus 24 px of margin (`geometry`). Normalisation happens inside.
"""

import torch
from torch import nn

from .geometry import CELLS

MEAN, STD = 110.0, 60.0


def conv_bn(cin, cout, k=3, stride=1, groups=1, pad=1):
    return nn.Sequential(nn.Conv2d(cin, cout, k, stride, pad, groups=groups, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class SepBlock(nn.Module):
    """Depthwise 3x3 then pointwise 1x1, residual when the shape allows."""

    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.dw = conv_bn(cin, cin, 3, stride, groups=cin)
        self.pw = nn.Sequential(nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout))
        self.residual = stride == 1 and cin == cout
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        y = self.pw(self.dw(x))
        return self.act(x + y if self.residual else y)


class BoardNet(nn.Module):
    def __init__(self, width=1.0):
        super().__init__()
        c = [int(round(v * width)) for v in (24, 32, 64, 128, 160)]
        self.stem = nn.Sequential(conv_bn(3, c[0], 3, 2), SepBlock(c[0], c[1], 2), SepBlock(c[1], c[1]))  # stride 4
        self.s8 = nn.Sequential(SepBlock(c[1], c[2], 2), SepBlock(c[2], c[2]), SepBlock(c[2], c[2]))  # stride 8: 54 x 54
        self.hand_head = nn.Sequential(SepBlock(c[2], c[2]), nn.Conv2d(c[2], 2, 1))
        self.s16 = nn.Sequential(SepBlock(c[2], c[3], 2), SepBlock(c[3], c[3]), SepBlock(c[3], c[3]))  # 24 x 24 over the playing area
        self.to_squares = conv_bn(c[3], c[4], 3, 3, pad=0)  # 8 x 8: one cell a square
        self.context = nn.Sequential(conv_bn(c[4], c[4]), conv_bn(c[4], c[4]))
        self.pieces = nn.Conv2d(c[4], 13, 1)
        self.cover = nn.Conv2d(c[4], 1, 1)
        self.contact = nn.Conv2d(c[4], 1, 1)

    def logits(self, board_u8):
        x = board_u8.permute(0, 3, 1, 2).float()
        x = (x - MEAN) / STD
        f8 = self.s8(self.stem(x))
        hands = self.hand_head(f8)
        area = f8[:, :, 3:CELLS - 3, 3:CELLS - 3]  # the playing area: 48 x 48 cells
        sq = self.to_squares(self.s16(area))
        sq = sq + self.context(sq)
        n = board_u8.shape[0]
        flat = lambda t: t.flatten(2).transpose(1, 2)  # [N, 64, C], FEN reading order  # noqa: E731
        return flat(self.pieces(sq)), flat(self.cover(sq))[..., 0], flat(self.contact(sq))[..., 0], hands.view(n, 2, CELLS, CELLS)

    def forward(self, board_u8):
        pieces, cover, contact, hands = self.logits(board_u8)
        return torch.softmax(pieces, -1), torch.sigmoid(cover), torch.sigmoid(contact), torch.sigmoid(hands)
