# label: safe
# why: the default FPN config (act_cfg=None): laterals are plain conv outputs, which no op saves, so the in-place top-down add is harmless
# source: https://github.com/open-mmlab/mmdetection/pull/7175 (mmdet/models/necks/fpn.py)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ConvModule(nn.Module):
    """Reduced mmcv ConvModule: conv -> (norm) -> activation (in place by default)."""

    def __init__(self, in_channels, out_channels, kernel_size, padding=0,
                 norm_cfg=None, act_cfg=dict(type='ReLU'), inplace=True):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding)
        self.with_norm = norm_cfg is not None
        self.with_activation = act_cfg is not None
        if self.with_norm:
            self.norm = nn.BatchNorm2d(out_channels)
        if self.with_activation:
            self.activate = nn.ReLU(inplace=inplace)

    def forward(self, x):
        x = self.conv(x)
        if self.with_norm:
            x = self.norm(x)
        if self.with_activation:
            x = self.activate(x)
        return x


class FPN(nn.Module):
    def __init__(self, in_channels, out_channels, num_outs, act_cfg=None):
        super(FPN, self).__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.num_ins = len(in_channels)
        self.num_outs = num_outs
        self.lateral_convs = nn.ModuleList()
        self.fpn_convs = nn.ModuleList()
        for i in range(self.num_ins):
            l_conv = ConvModule(in_channels[i], out_channels, 1, act_cfg=act_cfg)
            fpn_conv = ConvModule(out_channels, out_channels, 3, padding=1, act_cfg=act_cfg)
            self.lateral_convs.append(l_conv)
            self.fpn_convs.append(fpn_conv)

    def forward(self, inputs):
        assert len(inputs) == len(self.in_channels)

        # build laterals
        laterals = [
            lateral_conv(inputs[i])
            for i, lateral_conv in enumerate(self.lateral_convs)
        ]

        # build top-down path
        used_backbone_levels = len(laterals)
        for i in range(used_backbone_levels - 1, 0, -1):
            prev_shape = laterals[i - 1].shape[2:]
            laterals[i - 1] += F.interpolate(
                laterals[i], size=prev_shape, mode='nearest')

        # build outputs
        outs = [
            self.fpn_convs[i](laterals[i]) for i in range(used_backbone_levels)
        ]
        if self.num_outs > len(outs):
            for i in range(self.num_outs - used_backbone_levels):
                outs.append(F.max_pool2d(outs[-1], 1, stride=2))
        return tuple(outs)


neck = FPN(in_channels=[4, 8, 16], out_channels=4, num_outs=4)
feats = (torch.randn(1, 4, 16, 16), torch.randn(1, 8, 8, 8), torch.randn(1, 16, 4, 4))
outs = neck(feats)
loss = sum(o.mean() for o in outs)
loss.backward()
