# label: hazard silent no-twin
# why: flip_heatmaps shifts the flipped heatmaps right by one pixel with `heatmaps[..., 1:] = heatmaps[..., :-1]`; source and destination overlap in memory, so on CPU the copy reads columns it has already overwritten and smears the first column across each row.
# source: https://github.com/open-mmlab/mmpose/pull/1657
from typing import List

import torch
import torch.nn as nn
from torch import Tensor

torch.manual_seed(0)


def flip_heatmaps(heatmaps: Tensor, flip_indices: List[int], flip_mode: str = "heatmap", shift_heatmap: bool = True):
    if flip_mode == "heatmap":
        assert len(flip_indices) == heatmaps.shape[1]
        heatmaps = heatmaps[:, flip_indices].flip(-1)
    else:
        raise ValueError(f'Invalid flip_mode value "{flip_mode}"')

    if shift_heatmap:
        heatmaps[..., 1:] = heatmaps[..., :-1]  # <-- IPL002: the source view overlaps the columns being written

    return heatmaps


head = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 4, 1)).eval()
flip_indices = [0, 2, 1, 3]  # nose, left eye, right eye, neck

image = torch.rand(1, 3, 8, 10)
with torch.no_grad():
    heatmaps = head(image)
    heatmaps_flip = flip_heatmaps(head(image.flip(-1)), flip_indices)
heatmaps_tta = (heatmaps + heatmaps_flip) * 0.5
peaks = heatmaps_tta.flatten(2).argmax(-1)
