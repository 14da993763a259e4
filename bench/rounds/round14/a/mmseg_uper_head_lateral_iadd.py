# label: hazard raises
# why: the top-down FPN path adds the upsampled coarser lateral into laterals[i - 1] in place, but that tensor is the output of the ConvModule's ReLU, which saved it for backward.
# source: https://github.com/open-mmlab/mmsegmentation/pull/1103
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def resize(input, size=None, mode="nearest", align_corners=None):
    return F.interpolate(input, size, None, mode, align_corners)


class ConvModule(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, padding=0):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)
        self.activate = nn.ReLU()

    def forward(self, x):
        return self.activate(self.bn(self.conv(x)))


class UPerHead(nn.Module):
    def __init__(self, in_channels=(4, 8, 16), channels=6, num_classes=3):
        super().__init__()
        self.align_corners = False
        self.lateral_convs = nn.ModuleList()
        self.fpn_convs = nn.ModuleList()
        for in_ch in in_channels[:-1]:
            self.lateral_convs.append(ConvModule(in_ch, channels, 1))
            self.fpn_convs.append(ConvModule(channels, channels, 3, padding=1))
        self.bottleneck = ConvModule(in_channels[-1], channels, 3, padding=1)
        self.fpn_bottleneck = ConvModule(len(in_channels) * channels, channels, 3, padding=1)
        self.conv_seg = nn.Conv2d(channels, num_classes, 1)

    def psp_forward(self, inputs):
        return self.bottleneck(inputs[-1])

    def forward(self, inputs):
        laterals = [lateral_conv(inputs[i]) for i, lateral_conv in enumerate(self.lateral_convs)]
        laterals.append(self.psp_forward(inputs))

        used_backbone_levels = len(laterals)
        for i in range(used_backbone_levels - 1, 0, -1):
            prev_shape = laterals[i - 1].shape[2:]
            laterals[i - 1] += resize(laterals[i], size=prev_shape, mode="bilinear", align_corners=self.align_corners)  # <-- IPL001: laterals[i-1] is a ReLU output saved for backward

        fpn_outs = [self.fpn_convs[i](laterals[i]) for i in range(used_backbone_levels - 1)]
        fpn_outs.append(laterals[-1])
        for i in range(used_backbone_levels - 1, 0, -1):
            fpn_outs[i] = resize(fpn_outs[i], size=fpn_outs[0].shape[2:], mode="bilinear", align_corners=self.align_corners)
        fpn_outs = torch.cat(fpn_outs, dim=1)
        return self.conv_seg(self.fpn_bottleneck(fpn_outs))


head = UPerHead()
inputs = [torch.randn(2, 4, 16, 16), torch.randn(2, 8, 8, 8), torch.randn(2, 16, 4, 4)]
seg_label = torch.randint(0, 3, (2, 16, 16))
seg_logits = head(inputs)
loss = F.cross_entropy(seg_logits, seg_label)
loss.backward()
