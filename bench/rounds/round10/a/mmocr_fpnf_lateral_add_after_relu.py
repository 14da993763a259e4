# label: hazard raises
# why: laterals[i - 1] += upsampled adds in place into the output of the lateral ConvModule's ReLU, which ReLU saved for its backward
# source: https://github.com/open-mmlab/mmocr/pull/1018
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ConvModule(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, padding=0, inplace=False):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)
        self.activate = nn.ReLU(inplace=inplace)

    def forward(self, x):
        return self.activate(self.bn(self.conv(x)))


class FPNF(nn.Module):
    """FPN-like fusion module in Shape Robust Text Detection with PSENet."""

    def __init__(self, in_channels=(4, 8, 16, 32), out_channels=8, fusion_type='concat'):
        super().__init__()
        self.lateral_convs = nn.ModuleList()
        self.fpn_convs = nn.ModuleList()
        self.backbone_end_level = len(in_channels)
        for i in range(self.backbone_end_level):
            l_conv = ConvModule(in_channels[i], out_channels, 1, inplace=False)
            self.lateral_convs.append(l_conv)
            if i < self.backbone_end_level - 1:
                fpn_conv = ConvModule(out_channels, out_channels, 3, padding=1, inplace=False)
                self.fpn_convs.append(fpn_conv)
        self.fusion_type = fusion_type
        self.output_convs = ConvModule(out_channels * 4, out_channels * 4, 3, padding=1, inplace=False)

    def forward(self, inputs):
        # build laterals
        laterals = [
            lateral_conv(inputs[i])
            for i, lateral_conv in enumerate(self.lateral_convs)
        ]

        # build top-down path
        used_backbone_levels = len(laterals)
        for i in range(used_backbone_levels - 1, 0, -1):
            # step 1: upsample to level i-1 size and add level i-1
            prev_shape = laterals[i - 1].shape[2:]
            laterals[i - 1] += F.interpolate(laterals[i], size=prev_shape, mode='nearest')  # <-- IPL001: laterals[i - 1] is a ReLU output saved for backward
            # step 2: smooth level i-1
            laterals[i - 1] = self.fpn_convs[i - 1](laterals[i - 1])

        # upsample and cont
        bottom_shape = laterals[0].shape[2:]
        for i in range(1, used_backbone_levels):
            laterals[i] = F.interpolate(laterals[i], size=bottom_shape, mode='nearest')

        if self.fusion_type == 'concat':
            out = torch.cat(laterals, 1)
        else:
            out = laterals[0]
            for i in range(1, used_backbone_levels):
                out = out + laterals[i]
        out = self.output_convs(out)
        return out


neck = FPNF()
feats = [torch.randn(2, 4, 16, 16), torch.randn(2, 8, 8, 8),
         torch.randn(2, 16, 4, 4), torch.randn(2, 32, 2, 2)]
out = neck(feats)
loss = out.pow(2).mean()
loss.backward()
