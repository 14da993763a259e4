# label: hazard silent no-twin
# why: flip-test shifts the flipped heatmaps one pixel right with `heatmaps[..., 1:] = heatmaps[..., :-1]`, an in-place copy whose source is an overlapping view of the destination; for these strided 4-D views PyTorch cannot prove the overlap, so the copy silently reads columns it has already overwritten and smears the heatmaps (mmpose fixed it with `.clone()` on the source).
# source: https://github.com/open-mmlab/mmpose/commit/34142a922599a83c5172f670b11a669257399858 (mmpose/models/utils/tta.py flip_heatmaps, PR #1657)
from typing import List

import torch
import torch.nn as nn
from torch import Tensor

torch.manual_seed(0)


def flip_heatmaps(heatmaps: Tensor,
                  flip_indices: List[int],
                  flip_mode: str = 'heatmap',
                  shift_heatmap: bool = True):
    if flip_mode == 'heatmap':
        assert len(flip_indices) == heatmaps.shape[1]
        heatmaps = heatmaps[:, flip_indices].flip(-1)

    elif flip_mode == 'udp_combined':
        B, C, H, W = heatmaps.shape
        assert len(flip_indices) * 3 == C
        heatmaps = heatmaps.view(B, C // 3, 3, H, W)
        heatmaps = heatmaps[:, flip_indices].flip(-1)
        heatmaps[:, :, 1] = -heatmaps[:, :, 1]
        heatmaps = heatmaps.view(B, C, H, W)
    else:
        raise ValueError(f'Invalid flip_mode value "{flip_mode}"')

    if shift_heatmap:
        heatmaps[..., 1:] = heatmaps[..., :-1]  # <-- IPL002: in-place shift copies from an overlapping view of the same heatmaps, reading columns it has already overwritten

    return heatmaps


class TopdownHeatmapModel(nn.Module):
    def __init__(self, num_keypoints=5):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), nn.ReLU(inplace=True), nn.Conv2d(16, 16, 3, 1, 1), nn.ReLU(inplace=True))
        self.head = nn.Conv2d(16, num_keypoints, 1)

    def forward(self, x):
        return self.head(self.backbone(x))

    def predict(self, inputs, flip_indices, flip_test=True):
        heatmaps = self.forward(inputs)
        if flip_test:
            _heatmaps_flip = self.forward(inputs.flip(-1))
            heatmaps_flip = flip_heatmaps(_heatmaps_flip, flip_indices=flip_indices, flip_mode='heatmap', shift_heatmap=True)
            heatmaps = (heatmaps + heatmaps_flip) * 0.5
        return heatmaps


model = TopdownHeatmapModel(num_keypoints=5).eval()
flip_indices = [0, 2, 1, 4, 3]  # nose, left/right eye, left/right ear
inputs = torch.randn(2, 3, 32, 24)
with torch.no_grad():
    heatmaps = model.predict(inputs, flip_indices)
keypoint_idx = heatmaps.flatten(2).argmax(-1)
