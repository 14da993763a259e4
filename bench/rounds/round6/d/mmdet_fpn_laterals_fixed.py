# label: safe
# why: the merged fix rebinds the list entry to laterals[i - 1] + upsampled, so the ReLU output saved for backward is never overwritten; the ReLU(inplace=True) after a conv is harmless
# source: https://github.com/open-mmlab/mmdetection/pull/7175 (mmdet/models/necks/fpn.py, "Remove the inplace addition in FPN"; same report: https://github.com/lyongo/NWPU-MOC/issues/4)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ConvModule(nn.Module):
    """conv + optional activation, activation in place as in mmcv."""

    def __init__(self, in_channels, out_channels, kernel_size, padding=0, act_cfg=None, inplace=True):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding)
        self.with_activation = act_cfg is not None
        if self.with_activation:
            self.activate = nn.ReLU(inplace=inplace)

    def forward(self, x):
        x = self.conv(x)
        if self.with_activation:
            x = self.activate(x)
        return x


class FPN(nn.Module):
    def __init__(self, in_channels, out_channels, num_outs, act_cfg=None, upsample_cfg=dict(mode='nearest')):
        super(FPN, self).__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.num_ins = len(in_channels)
        self.num_outs = num_outs
        self.upsample_cfg = upsample_cfg.copy()
        self.start_level = 0

        self.lateral_convs = nn.ModuleList()
        self.fpn_convs = nn.ModuleList()
        for i in range(self.start_level, self.num_ins):
            l_conv = ConvModule(in_channels[i], out_channels, 1, act_cfg=act_cfg)
            fpn_conv = ConvModule(out_channels, out_channels, 3, padding=1, act_cfg=act_cfg)
            self.lateral_convs.append(l_conv)
            self.fpn_convs.append(fpn_conv)

    def forward(self, inputs):
        """Forward function."""
        assert len(inputs) == len(self.in_channels)

        # build laterals
        laterals = [
            lateral_conv(inputs[i + self.start_level])
            for i, lateral_conv in enumerate(self.lateral_convs)
        ]

        # build top-down path
        used_backbone_levels = len(laterals)
        for i in range(used_backbone_levels - 1, 0, -1):
            # In some cases, fixing `scale factor` (e.g. 2) is preferred, but
            #  it cannot co-exist with `size` in `F.interpolate`.
            if 'scale_factor' in self.upsample_cfg:
                laterals[i - 1] = laterals[i - 1] + F.interpolate(
                    laterals[i], **self.upsample_cfg)
            else:
                prev_shape = laterals[i - 1].shape[2:]
                laterals[i - 1] = laterals[i - 1] + F.interpolate(
                    laterals[i], size=prev_shape, **self.upsample_cfg)

        # build outputs
        # part 1: from original levels
        outs = [
            self.fpn_convs[i](laterals[i]) for i in range(used_backbone_levels)
        ]
        # part 2: add extra levels
        if self.num_outs > len(outs):
            for i in range(self.num_outs - used_backbone_levels):
                outs.append(F.max_pool2d(outs[-1], 1, stride=2))
        return tuple(outs)


neck = FPN(in_channels=[4, 8, 16], out_channels=6, num_outs=4, act_cfg=dict(type='ReLU'))
feats = (torch.randn(2, 4, 16, 16), torch.randn(2, 8, 8, 8), torch.randn(2, 16, 4, 4))
outs = neck(feats)
loss = sum(o.pow(2).mean() for o in outs)
loss.backward()
