# label: hazard silent
# why: spatial_crop_boxes converts the caller's float32 box tensor without copying (convert_data_type and .to(float32) both return the same tensor), then clamps and shifts it in place, so cropping a second ROI from the same boxes silently starts from already clipped, already shifted coordinates (MONAI fixed it with deepcopy(boxes)).
# source: https://github.com/Project-MONAI/MONAI/commit/524b2480402d45abee9a0b124ddbaaa3f3c2c794 (monai/data/box_utils.py spatial_crop_boxes, "copy box to avoid in-place op")
from typing import Sequence, Tuple, Union

import numpy as np
import torch

torch.manual_seed(0)

TO_REMOVE = 0.0  # StandardMode boxes: xmax/ymax/zmax are exclusive


def convert_data_type(data, output_type=torch.Tensor, dtype=None, wrap_sequence=False):
    # reduced monai.utils.type_conversion.convert_data_type: tensors pass through untouched
    if isinstance(data, torch.Tensor):
        out = data if dtype is None else data.to(dtype)
    elif isinstance(data, np.ndarray):
        out = torch.as_tensor(data, dtype=dtype)
    else:
        out = torch.as_tensor(data, dtype=dtype)
    return out, type(data), None


def get_spatial_dims(boxes):
    return int(boxes.shape[1] // 2)


def spatial_crop_boxes(
    boxes: torch.Tensor,
    roi_start: Union[Sequence[int], torch.Tensor],
    roi_end: Union[Sequence[int], torch.Tensor],
    remove_empty: bool = True,
) -> Tuple[torch.Tensor, torch.Tensor]:
    roi_start_torch, *_ = convert_data_type(data=roi_start, output_type=torch.Tensor, dtype=torch.int16, wrap_sequence=True)
    roi_end_torch, *_ = convert_data_type(data=roi_end, output_type=torch.Tensor, dtype=torch.int16, wrap_sequence=True)
    roi_end_torch = torch.maximum(roi_end_torch, roi_start_torch)

    # convert numpy to tensor if needed
    boxes_t, *_ = convert_data_type(boxes, torch.Tensor)

    # convert to float32 since torch.clamp_ does not support float16
    compute_dtype = torch.float32
    boxes_t = boxes_t.to(dtype=compute_dtype)

    # makes sure the bounding boxes are within the patch
    spatial_dims = get_spatial_dims(boxes=boxes)
    for axis in range(0, spatial_dims):
        boxes_t[:, axis].clamp_(min=roi_start_torch[axis], max=roi_end_torch[axis] - TO_REMOVE)  # <-- IPL004: clamps the caller's boxes tensor in place
        boxes_t[:, axis + spatial_dims].clamp_(min=roi_start_torch[axis], max=roi_end_torch[axis] - TO_REMOVE)  # <-- IPL004: clamps the caller's boxes tensor in place
        boxes_t[:, axis] -= roi_start_torch[axis]  # <-- IPL004: shifts the caller's boxes into ROI coordinates in place
        boxes_t[:, axis + spatial_dims] -= roi_start_torch[axis]  # <-- IPL004: shifts the caller's boxes into ROI coordinates in place

    # remove the boxes that are actually empty
    if remove_empty:
        keep_t = boxes_t[:, spatial_dims] >= boxes_t[:, 0] + 1 - TO_REMOVE
        for axis in range(1, spatial_dims):
            keep_t = keep_t & (boxes_t[:, axis + spatial_dims] >= boxes_t[:, axis] + 1 - TO_REMOVE)
        boxes_t = boxes_t[keep_t]

    return boxes_t, keep_t


# two training patches cropped from the same 3-D image (as RandCropBoxByPosNegLabeld does per sample)
boxes = torch.tensor([
    [10., 12., 4., 30., 28., 14.],
    [40., 35., 8., 60., 50., 20.],
    [5., 50., 2., 20., 62., 10.],
])
rois = [([0, 0, 0], [32, 32, 16]), ([16, 16, 0], [64, 64, 24])]
patch_boxes = []
for roi_start, roi_end in rois:
    cropped, keep = spatial_crop_boxes(boxes, roi_start, roi_end)
    patch_boxes.append(cropped)
