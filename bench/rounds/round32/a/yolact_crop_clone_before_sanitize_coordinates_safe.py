# label: safe
# why: YOLACT's sanitize_coordinates scales its arguments in place (`_x1 *= img_size`, documented "does things in-place behind the scenes so copy if necessary"), and crop() first does `boxes = boxes.clone()`, so the gt boxes that lincomb_mask_loss reuses afterwards for center_size() keep their relative coordinates; the in-place writes only touch the private copy and happen under no_grad.
# source: https://github.com/dbolya/yolact/commit/89fabd0de98f35acd9f49f77b845628d617d6d8c
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Cfg:
    mask_proto_crop = True
    mask_proto_normalize_emulate_roi_pooling = True
    mask_alpha = 6.125
    masks_to_train = 100


cfg = Cfg()


def center_size(boxes):
    """ Convert prior_boxes to (cx, cy, w, h)
    representation for comparison to center-size form ground truth data.
    """
    return torch.cat(((boxes[:, 2:] + boxes[:, :2]) / 2,     # cx, cy
                      boxes[:, 2:] - boxes[:, :2]), 1)      # w, h


def sanitize_coordinates(_x1, _x2, img_size, padding=0, cast=True):
    """
    Sanitizes the input coordinates so that x1 < x2, x1 != x2, x1 >= 0, and x2 <= image_size.
    Also converts from relative to absolute coordinates and casts the results to long tensors.

    If cast is false, the result won't be cast to longs.
    Warning: this does things in-place behind the scenes so copy if necessary.
    """
    _x1 *= img_size
    _x2 *= img_size
    if cast:
        _x1 = _x1.long()
        _x2 = _x2.long()
    x1 = torch.min(_x1, _x2)
    x2 = torch.max(_x1, _x2)
    x1 = torch.clamp(x1 - padding, min=0)
    x2 = torch.clamp(x2 + padding, max=img_size)

    return x1, x2


def crop(masks, boxes, padding=1):
    """
    "Crop" predicted masks by zeroing out everything not in the predicted bbox.
    Vectorized by Chong (thanks Chong).

    Args:
        - masks should be a size [h, w, n] tensor of masks
        - boxes should be a size [n, 4] tensor of bbox coords in relative point form
    """
    with torch.no_grad():
        h, w, n = masks.size()
        boxes = boxes.clone()  # Some in-place stuff goes on here
        x1, x2 = sanitize_coordinates(boxes[:, 0], boxes[:, 2], w, padding, cast=True)
        y1, y2 = sanitize_coordinates(boxes[:, 1], boxes[:, 3], h, padding, cast=True)

        rows = torch.arange(w, device=masks.device)[None, :, None].expand(h, w, n)
        cols = torch.arange(h, device=masks.device)[:, None, None].expand(h, w, n)

        masks_left = rows >= x1[None, None, :]
        masks_right = rows < x2[None, None, :]
        masks_up = cols >= y1[None, None, :]
        masks_down = cols < y2[None, None, :]

        crop_mask = masks_left * masks_right * masks_up * masks_down

    return masks * crop_mask.float()


class ProtoNet(nn.Module):
    def __init__(self, in_ch=8, num_protos=4):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(in_ch, 16, 3, padding=1), nn.ReLU(inplace=True),
                                 nn.Conv2d(16, num_protos, 1), nn.ReLU(inplace=True))

    def forward(self, x):
        return self.net(x)


def lincomb_mask_loss(pos, idx_t, mask_data, proto_data, masks, gt_box_t):
    mask_h = proto_data.size(1)
    mask_w = proto_data.size(2)

    loss_m = 0
    for idx in range(mask_data.size(0)):
        with torch.no_grad():
            downsampled_masks = F.interpolate(masks[idx].unsqueeze(0), (mask_h, mask_w),
                                              mode='bilinear', align_corners=False).squeeze(0)
            downsampled_masks = downsampled_masks.permute(1, 2, 0).contiguous()
            downsampled_masks = downsampled_masks.gt(0.5).float()

        cur_pos = pos[idx]
        pos_idx_t = idx_t[idx, cur_pos]

        # Note: this is in point-form
        pos_gt_box_t = gt_box_t[idx, cur_pos]

        if pos_idx_t.size(0) == 0:
            continue

        proto_masks = proto_data[idx]
        proto_coef = mask_data[idx, cur_pos, :]

        mask_t = downsampled_masks[:, :, pos_idx_t]

        # Size: [mask_h, mask_w, num_pos]
        pred_masks = proto_masks @ proto_coef.t()
        pred_masks = torch.sigmoid(pred_masks)

        if cfg.mask_proto_crop:
            pred_masks = crop(pred_masks, pos_gt_box_t)

        pre_loss = F.binary_cross_entropy(torch.clamp(pred_masks, 0, 1), mask_t, reduction='none')

        if cfg.mask_proto_normalize_emulate_roi_pooling:
            weight = mask_h * mask_w if cfg.mask_proto_crop else 1
            pos_get_csize = center_size(pos_gt_box_t)
            gt_box_width = pos_get_csize[:, 2] * mask_w
            gt_box_height = pos_get_csize[:, 3] * mask_h
            pre_loss = pre_loss.sum(dim=(0, 1)) / gt_box_width / gt_box_height * weight

        loss_m += torch.sum(pre_loss)

    return loss_m * cfg.mask_alpha / mask_h / mask_w


def main():
    B, num_priors, num_protos, H = 2, 6, 4, 16
    protonet = ProtoNet(num_protos=num_protos)
    coef_head = nn.Linear(8, num_protos)
    optimizer = torch.optim.SGD(list(protonet.parameters()) + list(coef_head.parameters()), lr=1e-3)

    feats = torch.randn(B, 8, H, H)
    prior_feats = torch.randn(B, num_priors, 8)
    proto_data = protonet(feats).permute(0, 2, 3, 1).contiguous()    # [B, h, w, k]
    mask_data = torch.tanh(coef_head(prior_feats))                   # [B, num_priors, k]

    gt_boxes = torch.tensor([[[0.10, 0.20, 0.60, 0.70], [0.30, 0.10, 0.90, 0.50]],
                             [[0.05, 0.05, 0.50, 0.95], [0.40, 0.40, 0.80, 0.80]]])
    idx_t = torch.randint(0, 2, (B, num_priors))
    gt_box_t = gt_boxes[torch.arange(B)[:, None], idx_t]             # matched gt box per prior
    pos = torch.rand(B, num_priors) > 0.3
    masks = (torch.rand(B, 2, 32, 32) > 0.5).float()

    loss = lincomb_mask_loss(pos, idx_t, mask_data, proto_data, masks, gt_box_t)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.detach(), gt_box_t, coef_head.weight.grad


loss, gt_box_t, coef_grad = main()
