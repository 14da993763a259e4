# label: hazard silent
# why: with box_crop_context == 0 _get_clamp_bbox edits its bbox argument in place (no .float() copy is made), so the caller's frame_data.bbox_xywh is silently turned into xyxy, and _crop_around_box then clamps the caller's clamp_bbox_xyxy in place as well.
# source: https://github.com/facebookresearch/pytorch3d/commit/4300030d7af3d982eb95b6a9a565475ead9f7810
import torch

torch.manual_seed(0)


class FrameData:
    def __init__(self):
        self.fg_probability = None
        self.mask_path = None
        self.bbox_xywh = None
        self.image_rgb = None
        self.principal_point = None


def _get_1d_bounds(arr):
    nz = torch.nonzero(arr).flatten()
    return int(nz[0]), int(nz[-1])


def _get_bbox_from_mask(mask, thr, decrease_quant: float = 0.05):
    # bbox in xywh
    masks_for_box = torch.zeros_like(mask)
    while masks_for_box.sum() <= 1.0:
        masks_for_box = (mask > thr).to(torch.float32)
        thr -= decrease_quant
    x0, x1 = _get_1d_bounds(masks_for_box.sum(dim=-2))
    y0, y1 = _get_1d_bounds(masks_for_box.sum(dim=-1))
    return x0, y0, x1 - x0, y1 - y0


def _get_clamp_bbox(bbox: torch.Tensor, box_crop_context: float = 0.0, impath: str = "") -> torch.Tensor:
    # box_crop_context: rate of expansion for bbox
    # returns possibly expanded bbox xyxy as float

    # increase box size
    if box_crop_context > 0.0:
        c = box_crop_context
        bbox = bbox.float()
        bbox[0] -= bbox[2] * c / 2
        bbox[1] -= bbox[3] * c / 2
        bbox[2] += bbox[2] * c
        bbox[3] += bbox[3] * c

    if (bbox[2:] <= 1.0).any():
        raise ValueError(f"squashed image {impath}!! The bounding box contains no pixels.")

    bbox[2:] = torch.clamp(bbox[2:], 2)  # <-- IPL004
    bbox[2:] += bbox[0:2] + 1  # convert to [xmin, ymin, xmax, ymax]  # <-- IPL004
    # +1 because upper bound is not inclusive

    return bbox


def _crop_around_box(tensor, bbox, impath: str = ""):
    # bbox is xyxy, where the upper bound is corrected with +1
    bbox[[0, 2]] = torch.clamp(bbox[[0, 2]], 0.0, tensor.shape[-1])  # <-- IPL004
    bbox[[1, 3]] = torch.clamp(bbox[[1, 3]], 0.0, tensor.shape[-2])  # <-- IPL004
    bbox = bbox.round().long()
    tensor = tensor[..., bbox[1]: bbox[3], bbox[0]: bbox[2]]
    assert all(c > 0 for c in tensor.shape), f"squashed image {impath}"
    return tensor


class JsonIndexDataset:
    def __init__(self, box_crop=True, box_crop_mask_thr=0.4, box_crop_context=0.0):
        self.box_crop = box_crop
        self.box_crop_mask_thr = box_crop_mask_thr
        self.box_crop_context = box_crop_context

    def _load_crop_fg_probability(self, mask, full_path="masks/frame000001.png"):
        fg_probability, bbox_xywh, clamp_bbox_xyxy = None, None, None
        bbox_xywh = torch.tensor(_get_bbox_from_mask(mask, self.box_crop_mask_thr), dtype=torch.float)
        if self.box_crop:
            clamp_bbox_xyxy = _get_clamp_bbox(bbox_xywh, self.box_crop_context)
            mask = _crop_around_box(mask, clamp_bbox_xyxy, full_path)
        fg_probability = mask
        return fg_probability, full_path, bbox_xywh, clamp_bbox_xyxy

    def __getitem__(self, sample):
        mask, image_rgb, principal_point_px = sample
        frame_data = FrameData()
        (frame_data.fg_probability, frame_data.mask_path, frame_data.bbox_xywh, clamp_bbox_xyxy) = self._load_crop_fg_probability(mask)
        frame_data.image_rgb = _crop_around_box(image_rgb, clamp_bbox_xyxy.clone())
        frame_data.principal_point = principal_point_px - clamp_bbox_xyxy[:2]
        return frame_data


def main():
    mask = torch.zeros(1, 24, 32)
    mask[:, 3:20, 20:32] = 1.0
    image_rgb = torch.rand(3, 24, 32)
    principal_point_px = torch.tensor([16.0, 12.0])
    dataset = JsonIndexDataset(box_crop=True, box_crop_context=0.0)
    frame_data = dataset[(mask, image_rgb, principal_point_px)]
    return frame_data.bbox_xywh, frame_data.principal_point, frame_data.fg_probability, frame_data.image_rgb


bbox_xywh, principal_point, fg_probability, image_rgb = main()
