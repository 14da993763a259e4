# label: safe
# why: The fix (mmdetection PR #8439, closing this issue) accumulates the pyramid levels out of place, feature_add_all_level = feature_add_all_level + ..., so the in-place ReLU output saved by ReluBackward0 keeps its version and the mask loss backpropagates.
# source: https://github.com/open-mmlab/mmdetection/issues/8221
from typing import Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor


class ConvModule(nn.Module):
    """conv -> norm -> act, the mmcv building block (act is ReLU(inplace=True) by default)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 norm_cfg=None, inplace=True, bias='auto'):
        super().__init__()
        self.with_norm = norm_cfg is not None
        if bias == 'auto':
            bias = not self.with_norm
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, bias=bias)
        if self.with_norm:
            self.gn = nn.GroupNorm(norm_cfg['num_groups'], out_channels)
        self.activate = nn.ReLU(inplace=inplace)

    def forward(self, x):
        x = self.conv(x)
        if self.with_norm:
            x = self.gn(x)
        return self.activate(x)


def generate_coordinate(featmap_sizes, device='cuda'):
    """Generate the coordinate."""
    x_range = torch.linspace(-1, 1, featmap_sizes[-1], device=device)
    y_range = torch.linspace(-1, 1, featmap_sizes[-2], device=device)
    y, x = torch.meshgrid(y_range, x_range, indexing='ij')
    y = y.expand([featmap_sizes[0], 1, -1, -1])
    x = x.expand([featmap_sizes[0], 1, -1, -1])
    coord_feat = torch.cat([x, y], 1)
    return coord_feat


class MaskFeatModule(nn.Module):
    """SOLOv2 mask feature map branch."""

    def __init__(self, in_channels, feat_channels, start_level, end_level, out_channels,
                 mask_stride=4, norm_cfg=None):
        super().__init__()
        self.in_channels = in_channels
        self.feat_channels = feat_channels
        self.start_level = start_level
        self.end_level = end_level
        self.mask_stride = mask_stride
        assert start_level >= 0 and end_level >= start_level
        self.out_channels = out_channels
        self.norm_cfg = norm_cfg
        self._init_layers()

    def _init_layers(self):
        self.convs_all_levels = nn.ModuleList()
        for i in range(self.start_level, self.end_level + 1):
            convs_per_level = nn.Sequential()
            if i == 0:
                convs_per_level.add_module(
                    f'conv{i}',
                    ConvModule(self.in_channels, self.feat_channels, 3, padding=1, norm_cfg=self.norm_cfg))
                self.convs_all_levels.append(convs_per_level)
                continue

            for j in range(i):
                if j == 0:
                    if i == self.end_level:
                        chn = self.in_channels + 2
                    else:
                        chn = self.in_channels
                    convs_per_level.add_module(
                        f'conv{j}',
                        ConvModule(chn, self.feat_channels, 3, padding=1, norm_cfg=self.norm_cfg))
                    convs_per_level.add_module(
                        f'upsample{j}',
                        nn.Upsample(scale_factor=2, mode='bilinear', align_corners=False))
                    continue

                convs_per_level.add_module(
                    f'conv{j}',
                    ConvModule(self.feat_channels, self.feat_channels, 3, padding=1, norm_cfg=self.norm_cfg))
                convs_per_level.add_module(
                    f'upsample{j}',
                    nn.Upsample(scale_factor=2, mode='bilinear', align_corners=False))

            self.convs_all_levels.append(convs_per_level)

        self.conv_pred = ConvModule(self.feat_channels, self.out_channels, 1, padding=0, norm_cfg=self.norm_cfg)

    def forward(self, x: Tuple[Tensor]) -> Tensor:
        inputs = x[self.start_level:self.end_level + 1]
        assert len(inputs) == (self.end_level - self.start_level + 1)
        feature_add_all_level = self.convs_all_levels[0](inputs[0])
        for i in range(1, len(inputs)):
            input_p = inputs[i]
            if i == len(inputs) - 1:
                coord_feat = generate_coordinate(input_p.size(), input_p.device)
                input_p = torch.cat([input_p, coord_feat], 1)

            feature_add_all_level = feature_add_all_level + \
                self.convs_all_levels[i](input_p)

        feature_pred = self.conv_pred(feature_add_all_level)
        return feature_pred


class SOLOV2Head(nn.Module):
    """Reduced SOLOv2 head: kernel branch on one grid + the unified mask feature branch."""

    def __init__(self, in_channels=8, feat_channels=8, num_grid=4, mask_out_channels=8):
        super().__init__()
        self.in_channels = in_channels
        self.num_grid = num_grid
        norm_cfg = dict(num_groups=4)
        self.mask_feature_head = MaskFeatModule(in_channels, feat_channels, 0, 3, mask_out_channels, norm_cfg=norm_cfg)
        self.kernel_convs = nn.ModuleList([
            ConvModule(in_channels + 2, feat_channels, 3, padding=1, norm_cfg=norm_cfg),
            ConvModule(feat_channels, feat_channels, 3, padding=1, norm_cfg=norm_cfg),
        ])
        self.conv_kernel = nn.Conv2d(feat_channels, mask_out_channels, 3, padding=1)

    def forward(self, x):
        mask_feats = self.mask_feature_head(x)
        ins_kernel_feat = x[1]
        coord_feat = generate_coordinate(ins_kernel_feat.size(), ins_kernel_feat.device)
        kernel_feat = torch.cat([ins_kernel_feat, coord_feat], 1)
        kernel_feat = F.interpolate(kernel_feat, size=self.num_grid, mode='bilinear', align_corners=False)
        for kernel_conv in self.kernel_convs:
            kernel_feat = kernel_conv(kernel_feat)
        kernel_pred = self.conv_kernel(kernel_feat)
        return kernel_pred, mask_feats


def dice_loss(pred, target, eps=1e-3):
    pred = pred.flatten(1)
    target = target.flatten(1).float()
    a = (pred * target).sum(1)
    b = (pred * pred).sum(1) + eps
    c = (target * target).sum(1) + eps
    return (1 - 2 * a / (b + c)).mean()


def main():
    torch.manual_seed(0)
    head = SOLOV2Head()
    # FPN levels P2..P5 of a 64x64 image
    feats = tuple(torch.randn(2, 8, 16 // 2 ** i, 16 // 2 ** i) for i in range(4))
    kernel_pred, mask_feats = head(feats)
    # dynamic 1x1 conv with the kernel predicted at one positive grid cell per image
    pos_kernels = kernel_pred[:, :, 1, 2]  # (B, C)
    mask_preds = torch.sigmoid((mask_feats * pos_kernels[:, :, None, None]).sum(1))
    gt_masks = torch.zeros(2, 16, 16)
    gt_masks[:, 4:10, 6:12] = 1
    loss_mask = dice_loss(mask_preds, gt_masks)
    loss_mask.backward()
    return loss_mask, head


loss_mask, head = main()
print(float(loss_mask))
