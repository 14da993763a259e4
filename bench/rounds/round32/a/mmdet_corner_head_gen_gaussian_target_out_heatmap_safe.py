# label: safe
# why: After the fix, gen_gaussian_target writes the kernel into the caller's heatmap with torch.max(..., out=heatmap slice) and CornerHead.get_targets assigns the result back into the same target slice; the targets are fresh, grad-free tensors that are only read afterwards by the focal loss, so the in-place accumulation of several peaks is intended and safe.
# source: https://github.com/open-mmlab/mmdetection/pull/3543
from math import ceil, sqrt

import torch
import torch.nn as nn


def gaussian2D(radius, sigma=1, dtype=torch.float32, device='cpu'):
    """Generate 2D gaussian kernel."""
    x = torch.arange(
        -radius, radius + 1, dtype=dtype, device=device).view(1, -1)
    y = torch.arange(
        -radius, radius + 1, dtype=dtype, device=device).view(-1, 1)

    h = (-(x * x + y * y) / (2 * sigma * sigma)).exp()

    h[h < torch.finfo(h.dtype).eps * h.max()] = 0
    return h


def gen_gaussian_target(heatmap, center, radius, k=1):
    """Generate 2D gaussian heatmap."""
    diameter = 2 * radius + 1
    gaussian_kernel = gaussian2D(
        radius, sigma=diameter / 6, dtype=heatmap.dtype, device=heatmap.device)

    x, y = center

    height, width = heatmap.shape[:2]

    left, right = min(x, radius), min(width - x, radius + 1)
    top, bottom = min(y, radius), min(height - y, radius + 1)

    masked_heatmap = heatmap[y - top:y + bottom, x - left:x + right]
    masked_gaussian = gaussian_kernel[radius - top:radius + bottom,
                                      radius - left:radius + right]
    out_heatmap = heatmap
    torch.max(
        masked_heatmap,
        masked_gaussian * k,
        out=out_heatmap[y - top:y + bottom, x - left:x + right])

    return out_heatmap


def gaussian_radius(det_size, min_overlap):
    """Generate 2D gaussian radius (CornerNet)."""
    height, width = det_size

    a1 = 1
    b1 = (height + width)
    c1 = width * height * (1 - min_overlap) / (1 + min_overlap)
    sq1 = sqrt(b1**2 - 4 * a1 * c1)
    r1 = (b1 - sq1) / (2 * a1)

    a2 = 4
    b2 = 2 * (height + width)
    c2 = (1 - min_overlap) * width * height
    sq2 = sqrt(b2**2 - 4 * a2 * c2)
    r2 = (b2 - sq2) / (2 * a2)

    a3 = 4 * min_overlap
    b3 = -2 * min_overlap * (height + width)
    c3 = (min_overlap - 1) * width * height
    sq3 = sqrt(b3**2 - 4 * a3 * c3)
    r3 = (b3 + sq3) / (2 * a3)
    return min(r1, r2, r3)


def gaussian_focal_loss(pred, gaussian_target, alpha=2.0, gamma=4.0):
    eps = 1e-12
    pos_weights = gaussian_target.eq(1)
    neg_weights = (1 - gaussian_target).pow(gamma)
    pos_loss = -(pred + eps).log() * (1 - pred).pow(alpha) * pos_weights
    neg_loss = -(1 - pred + eps).log() * pred.pow(alpha) * neg_weights
    return pos_loss + neg_loss


class CornerHead(nn.Module):
    """Reduced CornerNet head: heatmap and offset branches per corner."""

    def __init__(self, num_classes, in_channels):
        super(CornerHead, self).__init__()
        self.num_classes = num_classes
        self.tl_heat = nn.Conv2d(in_channels, num_classes, 3, padding=1)
        self.br_heat = nn.Conv2d(in_channels, num_classes, 3, padding=1)
        self.tl_off = nn.Conv2d(in_channels, 2, 3, padding=1)
        self.br_off = nn.Conv2d(in_channels, 2, 3, padding=1)

    def forward(self, x):
        return self.tl_heat(x), self.br_heat(x), self.tl_off(x), self.br_off(x)

    def get_targets(self, gt_bboxes, gt_labels, feat_shape, img_shape):
        batch_size, _, height, width = feat_shape
        img_h, img_w = img_shape[:2]

        width_ratio = float(width / img_w)
        height_ratio = float(height / img_h)

        gt_tl_heatmap = gt_bboxes[-1].new_zeros(
            [batch_size, self.num_classes, height, width])
        gt_br_heatmap = gt_bboxes[-1].new_zeros(
            [batch_size, self.num_classes, height, width])
        gt_tl_offset = gt_bboxes[-1].new_zeros([batch_size, 2, height, width])
        gt_br_offset = gt_bboxes[-1].new_zeros([batch_size, 2, height, width])

        for batch_id in range(batch_size):
            for box_id in range(len(gt_labels[batch_id])):
                left, top, right, bottom = gt_bboxes[batch_id][box_id]
                label = gt_labels[batch_id][box_id]

                # Use coords in the feature level to generate ground truth
                scale_left = left * width_ratio
                scale_right = right * width_ratio
                scale_top = top * height_ratio
                scale_bottom = bottom * height_ratio

                # Int coords on feature map/ground truth tensor
                left_idx = int(min(scale_left, width - 1))
                right_idx = int(min(scale_right, width - 1))
                top_idx = int(min(scale_top, height - 1))
                bottom_idx = int(min(scale_bottom, height - 1))

                # Generate gaussian heatmap
                scale_box_width = ceil(scale_right - scale_left)
                scale_box_height = ceil(scale_bottom - scale_top)
                radius = gaussian_radius((scale_box_height, scale_box_width),
                                         min_overlap=0.3)
                radius = max(0, int(radius))
                gt_tl_heatmap[batch_id, label] = gen_gaussian_target(
                    gt_tl_heatmap[batch_id, label], [left_idx, top_idx],
                    radius)
                gt_br_heatmap[batch_id, label] = gen_gaussian_target(
                    gt_br_heatmap[batch_id, label], [right_idx, bottom_idx],
                    radius)

                # Generate corner offset
                left_offset = scale_left - left_idx
                top_offset = scale_top - top_idx
                right_offset = scale_right - right_idx
                bottom_offset = scale_bottom - bottom_idx
                gt_tl_offset[batch_id, 0, top_idx, left_idx] = left_offset
                gt_tl_offset[batch_id, 1, top_idx, left_idx] = top_offset
                gt_br_offset[batch_id, 0, bottom_idx, right_idx] = right_offset
                gt_br_offset[batch_id, 1, bottom_idx,
                             right_idx] = bottom_offset

        return dict(
            topleft_heatmap=gt_tl_heatmap,
            topleft_offset=gt_tl_offset,
            bottomright_heatmap=gt_br_heatmap,
            bottomright_offset=gt_br_offset)

    def loss(self, tl_heat, br_heat, tl_off, br_off, targets):
        tl_det_loss = gaussian_focal_loss(tl_heat.sigmoid(), targets['topleft_heatmap']).sum()
        br_det_loss = gaussian_focal_loss(br_heat.sigmoid(), targets['bottomright_heatmap']).sum()
        tl_off_mask = targets['topleft_heatmap'].eq(1).sum(1).gt(0).unsqueeze(1).type_as(tl_heat)
        br_off_mask = targets['bottomright_heatmap'].eq(1).sum(1).gt(0).unsqueeze(1).type_as(br_heat)
        tl_off_loss = (torch.abs(tl_off - targets['topleft_offset']) * tl_off_mask).sum()
        br_off_loss = (torch.abs(br_off - targets['bottomright_offset']) * br_off_mask).sum()
        return tl_det_loss + br_det_loss + tl_off_loss + br_off_loss


torch.manual_seed(0)
head = CornerHead(num_classes=3, in_channels=8)
feat = torch.randn(2, 8, 16, 16)
# two gts of the same class in image 0: both peaks must survive in the target
gt_bboxes = [torch.tensor([[4., 6., 30., 40.], [20., 10., 60., 50.]]),
             torch.tensor([[10., 12., 50., 44.]])]
gt_labels = [torch.tensor([1, 1]), torch.tensor([2])]
tl_heat, br_heat, tl_off, br_off = head(feat)
targets = head.get_targets(gt_bboxes, gt_labels, tl_heat.shape, (64, 64))
loss = head.loss(tl_heat, br_heat, tl_off, br_off, targets)
loss.backward()
tl_heat_grad = head.tl_heat.weight.grad
print('peaks', int(targets['topleft_heatmap'].eq(1).sum()), 'loss', loss.item())
