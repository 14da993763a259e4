# label: safe
# why: _clamp_bounding_boxes (from the PR that gave convert_bounding_box_format its `inplace` flag "only where this is safe") first takes a private copy (`clone()` for float boxes, `.float()` otherwise) and only then runs the CXCYWH<->XYXY conversions with inplace=True and clamps the x/y column views with clamp_; the caller's ground-truth boxes are never written, so a target kept for the loss after clamping still holds the raw annotation.
# source: https://github.com/pytorch/vision/pull/6858
import enum

import torch
import torch.nn as nn
import torch.nn.functional as F


class BoundingBoxFormat(enum.Enum):
    XYXY = "XYXY"
    XYWH = "XYWH"
    CXCYWH = "CXCYWH"


def _xywh_to_xyxy(xywh: torch.Tensor, inplace: bool) -> torch.Tensor:
    xyxy = xywh if inplace else xywh.clone()
    xyxy[..., 2:] += xyxy[..., :2]
    return xyxy


def _xyxy_to_xywh(xyxy: torch.Tensor, inplace: bool) -> torch.Tensor:
    xywh = xyxy if inplace else xyxy.clone()
    xywh[..., 2:] -= xywh[..., :2]
    return xywh


def _cxcywh_to_xyxy(cxcywh: torch.Tensor, inplace: bool) -> torch.Tensor:
    if not inplace:
        cxcywh = cxcywh.clone()

    # Trick to do fast division by 2 and ceil, without casting. It produces the same result as
    # `torchvision.ops._box_convert._box_cxcywh_to_xyxy`.
    half_wh = cxcywh[..., 2:].div(-2, rounding_mode=None if cxcywh.is_floating_point() else "floor").abs_()
    # (cx - width / 2) = x1, same for y1
    cxcywh[..., :2].sub_(half_wh)
    # (x1 + width) = x2, same for y2
    cxcywh[..., 2:].add_(cxcywh[..., :2])

    return cxcywh


def _xyxy_to_cxcywh(xyxy: torch.Tensor, inplace: bool) -> torch.Tensor:
    if not inplace:
        xyxy = xyxy.clone()

    # (x2 - x1) = width, same for height
    xyxy[..., 2:].sub_(xyxy[..., :2])
    # (x1 * 2 + width) / 2 = x1 + width / 2 = x1 + (x2-x1)/2 = (x1 + x2)/2 = cx, same for cy
    xyxy[..., :2].mul_(2).add_(xyxy[..., 2:]).div_(2, rounding_mode=None if xyxy.is_floating_point() else "floor")

    return xyxy


def _convert_bounding_box_format(
    bounding_boxes: torch.Tensor, old_format: BoundingBoxFormat, new_format: BoundingBoxFormat, inplace: bool = False
) -> torch.Tensor:
    if new_format == old_format:
        return bounding_boxes

    if old_format == BoundingBoxFormat.XYWH:
        bounding_boxes = _xywh_to_xyxy(bounding_boxes, inplace)
    elif old_format == BoundingBoxFormat.CXCYWH:
        bounding_boxes = _cxcywh_to_xyxy(bounding_boxes, inplace)

    if new_format == BoundingBoxFormat.XYWH:
        bounding_boxes = _xyxy_to_xywh(bounding_boxes, inplace)
    elif new_format == BoundingBoxFormat.CXCYWH:
        bounding_boxes = _xyxy_to_cxcywh(bounding_boxes, inplace)

    return bounding_boxes


def _clamp_bounding_boxes(
    bounding_boxes: torch.Tensor, format: BoundingBoxFormat, canvas_size: tuple
) -> torch.Tensor:
    in_dtype = bounding_boxes.dtype
    bounding_boxes = bounding_boxes.clone() if bounding_boxes.is_floating_point() else bounding_boxes.float()
    xyxy_boxes = _convert_bounding_box_format(
        bounding_boxes, old_format=format, new_format=BoundingBoxFormat.XYXY, inplace=True
    )
    xyxy_boxes[..., 0::2].clamp_(min=0, max=canvas_size[1])
    xyxy_boxes[..., 1::2].clamp_(min=0, max=canvas_size[0])
    out_boxes = _convert_bounding_box_format(
        xyxy_boxes, old_format=BoundingBoxFormat.XYXY, new_format=format, inplace=True
    )
    return out_boxes.to(in_dtype)


class BoxRegressor(nn.Module):
    def __init__(self, num_queries=3):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.bbox_embed = nn.Linear(8, num_queries * 4)
        self.num_queries = num_queries

    def forward(self, images):
        return self.bbox_embed(self.backbone(images)).sigmoid().view(-1, self.num_queries, 4)


def main():
    torch.manual_seed(0)
    canvas_size = (32, 32)
    images = torch.rand(2, 3, *canvas_size)
    # CXCYWH annotations, some boxes reaching past the canvas after augmentation
    gt_boxes = torch.tensor([[[4.0, 6.0, 12.0, 10.0], [30.0, 16.0, 8.0, 20.0], [16.0, 16.0, 10.0, 10.0]],
                             [[2.0, 30.0, 6.0, 8.0], [20.0, 8.0, 30.0, 6.0], [12.0, 20.0, 4.0, 4.0]]])
    clamped = _clamp_bounding_boxes(gt_boxes, format=BoundingBoxFormat.CXCYWH, canvas_size=canvas_size)
    model = BoxRegressor()
    pred = model(images) * torch.tensor([canvas_size[1], canvas_size[0], canvas_size[1], canvas_size[0]])
    loss = F.l1_loss(pred, clamped) + 0.1 * F.l1_loss(pred, gt_boxes)
    loss.backward()
    return gt_boxes, clamped, loss, model.bbox_embed.weight.grad


gt_boxes, clamped, loss, grad = main()
print(float(loss))
