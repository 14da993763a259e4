# label: safe no-twin
# why: mmcv's pure-python corner pool (used for CornerNet on torch<1.5) clones the input once and then repeatedly writes `cur_temp[...] = torch.where(max_temp > next_temp, max_temp, next_temp)` into narrow views of that clone; where() only saves its boolean mask and max_temp is a separate clone, so the in-place writes never clobber anything autograd needs and the gradients match torch.cummax.
# source: https://github.com/open-mmlab/mmcv/commit/8c23bf140a2d329537aabe8947d6ff3125ae7a16
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def _corner_pool(x, dim, flip):
    size = x.size(dim)
    output = x.clone()

    ind = 1
    while ind < size:
        if flip:
            cur_start = 0
            cur_len = size - ind
            next_start = ind
            next_len = size - ind
        else:
            cur_start = ind
            cur_len = size - ind
            next_start = 0
            next_len = size - ind

        # max_temp should be cloned for backward computation
        max_temp = output.narrow(dim, cur_start, cur_len).clone()
        cur_temp = output.narrow(dim, cur_start, cur_len)
        next_temp = output.narrow(dim, next_start, next_len)

        cur_temp[...] = torch.where(max_temp > next_temp, max_temp, next_temp)

        ind = ind << 1

    return output


class CornerPool(nn.Module):
    cummax_dim_flip = {
        "bottom": (2, False),
        "left": (3, True),
        "right": (3, False),
        "top": (2, True),
    }

    def __init__(self, mode):
        super(CornerPool, self).__init__()
        assert mode in self.cummax_dim_flip
        self.mode = mode

    def forward(self, x):
        # the torch<1.5 branch of mmcv.ops.CornerPool.forward
        dim, flip = self.cummax_dim_flip[self.mode]
        return _corner_pool(x, dim, flip)


class BiCornerPool(nn.Module):
    """mmdet CornerHead: two directional pools summed, then a residual conv block."""

    def __init__(self, in_channels, directions, feat_channels=8, out_channels=8):
        super().__init__()
        self.direction1_conv = nn.Sequential(nn.Conv2d(in_channels, feat_channels, 3, padding=1), nn.BatchNorm2d(feat_channels), nn.ReLU())
        self.direction2_conv = nn.Sequential(nn.Conv2d(in_channels, feat_channels, 3, padding=1), nn.BatchNorm2d(feat_channels), nn.ReLU())
        self.aftpool_conv = nn.Sequential(nn.Conv2d(feat_channels, out_channels, 3, padding=1), nn.BatchNorm2d(out_channels))
        self.conv1 = nn.Sequential(nn.Conv2d(in_channels, out_channels, 1), nn.BatchNorm2d(out_channels))
        self.conv2 = nn.Sequential(nn.Conv2d(in_channels, out_channels, 3, padding=1), nn.BatchNorm2d(out_channels), nn.ReLU())
        self.direction1_pool = CornerPool(directions[0])
        self.direction2_pool = CornerPool(directions[1])
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        direction1_conv = self.direction1_conv(x)
        direction2_conv = self.direction2_conv(x)
        direction1_feat = self.direction1_pool(direction1_conv)
        direction2_feat = self.direction2_pool(direction2_conv)
        aftpool_conv = self.aftpool_conv(direction1_feat + direction2_feat)
        conv1 = self.conv1(x)
        relu = self.relu(aftpool_conv + conv1)
        conv2 = self.conv2(relu)
        return conv2


def gaussian_focal_loss(pred, gaussian_target, alpha=2.0, gamma=4.0):
    eps = 1e-12
    pos_weights = gaussian_target.eq(1)
    neg_weights = (1 - gaussian_target).pow(gamma)
    pos_loss = -(pred + eps).log() * (1 - pred).pow(alpha) * pos_weights
    neg_loss = -(1 - pred + eps).log() * pred.pow(alpha) * neg_weights
    return (pos_loss + neg_loss).sum() / pos_weights.sum().clamp(min=1)


num_classes = 3
tl_pool = BiCornerPool(8, ("top", "left"))
tl_heat = nn.Conv2d(8, num_classes, 1)
feats = torch.randn(2, 8, 12, 12, requires_grad=True)
gaussian_target = torch.rand(2, num_classes, 12, 12) * 0.9
gaussian_target[0, 1, 3, 4] = 1.0
gaussian_target[1, 2, 7, 2] = 1.0

tl_feat = tl_pool(feats)
tl_heatmap = tl_heat(tl_feat).sigmoid().clamp(1e-4, 1 - 1e-4)
loss = gaussian_focal_loss(tl_heatmap, gaussian_target)
loss.backward()

pooled = _corner_pool(feats.detach(), 2, True)
feats_grad = feats.grad
pool_conv_grad = tl_pool.direction1_conv[0].weight.grad
loss = loss.detach()
tl_heatmap = tl_heatmap.detach()
