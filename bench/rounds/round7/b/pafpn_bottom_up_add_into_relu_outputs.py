# label: hazard raises
# why: with act_cfg=ReLU every ConvModule output is a ReLU result that ReLU's backward needs, and PAFPN accumulates the top-down and bottom-up paths into those list entries with +=.
# source: https://github.com/open-mmlab/mmdetection/pull/9450
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ConvModule(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, act_cfg=None, inplace=True):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)
        self.with_activation = act_cfg is not None
        if self.with_activation:
            self.activate = nn.ReLU(inplace=inplace)

    def forward(self, x):
        x = self.conv(x)
        if self.with_activation:
            x = self.activate(x)
        return x


class PAFPN(nn.Module):
    def __init__(self, in_channels, out_channels, num_outs, act_cfg=None):
        super().__init__()
        self.num_ins = len(in_channels)
        self.num_outs = num_outs
        self.lateral_convs = nn.ModuleList()
        self.fpn_convs = nn.ModuleList()
        for i in range(self.num_ins):
            self.lateral_convs.append(ConvModule(in_channels[i], out_channels, 1, act_cfg=act_cfg, inplace=False))
            self.fpn_convs.append(ConvModule(out_channels, out_channels, 3, padding=1, act_cfg=act_cfg, inplace=False))
        self.downsample_convs = nn.ModuleList()
        self.pafpn_convs = nn.ModuleList()
        for i in range(1, self.num_ins):
            self.downsample_convs.append(
                ConvModule(out_channels, out_channels, 3, stride=2, padding=1, act_cfg=act_cfg, inplace=False))
            self.pafpn_convs.append(ConvModule(out_channels, out_channels, 3, padding=1, act_cfg=act_cfg, inplace=False))

    def forward(self, inputs):
        assert len(inputs) == len(self.lateral_convs)
        # build laterals
        laterals = [lateral_conv(inputs[i]) for i, lateral_conv in enumerate(self.lateral_convs)]
        # build top-down path
        used_backbone_levels = len(laterals)
        for i in range(used_backbone_levels - 1, 0, -1):
            prev_shape = laterals[i - 1].shape[2:]
            laterals[i - 1] += F.interpolate(laterals[i], size=prev_shape, mode='nearest')  # <-- IPL001: adds into a ReLU output kept in the list
        # build outputs
        # part 1: from original levels
        inter_outs = [self.fpn_convs[i](laterals[i]) for i in range(used_backbone_levels)]
        # part 2: add bottom-up path
        for i in range(0, used_backbone_levels - 1):
            inter_outs[i + 1] += self.downsample_convs[i](inter_outs[i])  # <-- IPL001: adds into a ReLU output ReLU's backward needs
        outs = []
        outs.append(inter_outs[0])
        outs.extend([self.pafpn_convs[i - 1](inter_outs[i]) for i in range(1, used_backbone_levels)])
        # part 3: add extra levels
        if self.num_outs > len(outs):
            for i in range(self.num_outs - used_backbone_levels):
                outs.append(F.max_pool2d(outs[-1], 1, stride=2))
        return tuple(outs)


neck = PAFPN(in_channels=[4, 8, 16], out_channels=8, num_outs=4, act_cfg=dict(type='ReLU'))
inputs = [torch.randn(1, 4, 16, 16), torch.randn(1, 8, 8, 8), torch.randn(1, 16, 4, 4)]
outs = neck(inputs)
loss = sum(o.mean() for o in outs)
loss.backward()
