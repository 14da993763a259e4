# label: safe
# why: MONAI's spatial_crop_boxes (version fixed for MetaTensor in this PR) first copies the caller's boxes (`deepcopy`, later `.clone()`), then clamps and shifts their coordinate columns in place (`boxes_t[:, axis].clamp_(...)`, `boxes_t[:, axis] -= roi_start_t[axis]`); only the private copy changes, so cropping several patches from the same ground-truth boxes sees the original boxes every time.
# source: https://github.com/Project-MONAI/MONAI/pull/4666
from copy import deepcopy
from typing import Sequence, Tuple, Union

import torch
import torch.nn as nn

TO_REMOVE = 0.0
COMPUTE_DTYPE = torch.float32


def get_spatial_dims(boxes=None, spatial_size=None) -> int:
    return int(boxes.shape[1] / 2)


def spatial_crop_boxes(
    boxes: torch.Tensor,
    roi_start: Union[Sequence[int], torch.Tensor],
    roi_end: Union[Sequence[int], torch.Tensor],
    remove_empty: bool = True,
) -> Tuple[torch.Tensor, torch.Tensor]:
    # convert numpy to tensor if needed
    boxes_t = deepcopy(boxes)

    # convert to float32 since torch.clamp_ does not support float16
    boxes_t = boxes_t.to(dtype=COMPUTE_DTYPE)

    roi_start_t = torch.as_tensor(roi_start, dtype=boxes_t.dtype).to(torch.int16)
    roi_end_t = torch.as_tensor(roi_end, dtype=boxes_t.dtype).to(torch.int16)
    roi_end_t = torch.maximum(roi_end_t, roi_start_t)

    # makes sure the bounding boxes are within the patch
    spatial_dims = get_spatial_dims(boxes=boxes, spatial_size=roi_end)
    for axis in range(0, spatial_dims):
        boxes_t[:, axis].clamp_(min=roi_start_t[axis], max=roi_end_t[axis] - TO_REMOVE)
        boxes_t[:, axis + spatial_dims].clamp_(min=roi_start_t[axis], max=roi_end_t[axis] - TO_REMOVE)
        boxes_t[:, axis] -= roi_start_t[axis]
        boxes_t[:, axis + spatial_dims] -= roi_start_t[axis]

    # remove the boxes that are actually empty
    if remove_empty:
        keep_t = boxes_t[:, spatial_dims] >= boxes_t[:, 0] + 1 - TO_REMOVE
        for axis in range(1, spatial_dims):
            keep_t = keep_t & (boxes_t[:, axis + spatial_dims] >= boxes_t[:, axis] + 1 - TO_REMOVE)
        boxes_t = boxes_t[keep_t]
    else:
        keep_t = torch.full_like(boxes_t[:, 0], fill_value=True, dtype=torch.bool)

    return boxes_t, keep_t


class RetinaHead3D(nn.Module):
    """Stand-in for the detector head that regresses box centres inside a cropped patch."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(1, 4, 3, padding=1)
        self.reg = nn.Linear(4, 3)

    def forward(self, patch):
        feat = torch.relu(self.conv(patch)).mean(dim=(2, 3, 4))
        return self.reg(feat)


def main():
    torch.manual_seed(0)
    image = torch.rand(1, 1, 24, 24, 24)
    boxes = torch.tensor([[2.0, 3.0, 4.0, 10.0, 12.0, 9.0],
                          [14.0, 15.0, 13.0, 22.0, 20.0, 21.0]])  # StandardMode xyzxyz
    labels = torch.tensor([1, 2])
    head = RetinaHead3D()
    rois = [((0, 0, 0), (16, 16, 16)), ((8, 8, 8), (24, 24, 24))]
    loss = 0.0
    cropped = []
    for roi_start, roi_end in rois:
        patch = image[..., roi_start[0]:roi_end[0], roi_start[1]:roi_end[1], roi_start[2]:roi_end[2]]
        boxes_crop, keep = spatial_crop_boxes(boxes, roi_start, roi_end)
        cropped.append(boxes_crop)
        if boxes_crop.shape[0] == 0:
            continue
        centers = (boxes_crop[:, :3] + boxes_crop[:, 3:]) / 2
        pred = head(patch)
        loss = loss + ((pred - centers.mean(0, keepdim=True)) ** 2).mean()
    loss.backward()
    crop_a, crop_b = cropped
    return loss, boxes, crop_a, crop_b, labels, head


loss, boxes, crop_a, crop_b, labels, head = main()
print(float(loss))
