# label: safe
# why: the top-down path rebinds `laterals[i - 1] = laterals[i - 1] + resize(...)`, so the saved in-place ReLU outputs are never written again and backward sees the values it saved.
# source: https://github.com/PKU-EPIC/DREDS/issues/3
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def resize(input, size=None, mode='nearest', align_corners=None):
    return F.interpolate(input, size, None, mode, align_corners)


class ConvModule(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, padding=0,
                 bias=False, inplace=True, order=('conv', 'norm', 'act')):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, 1, padding, bias=bias)
        self.bn = nn.BatchNorm2d(out_channels)
        self.activate = nn.ReLU(inplace)
        self.order = order

    def forward(self, x, activate=True, norm=True):
        for layer in self.order:
            if layer == 'conv':
                x = self.conv(x)
            elif layer == 'norm' and norm:
                x = self.bn(x)
            elif layer == 'act' and activate:
                x = self.activate(x)
        return x


class UPerHead(nn.Module):
    def __init__(self, in_channels=(8, 16, 32), channels=8, num_classes=1, align_corners=False):
        super().__init__()
        self.align_corners = align_corners
        self.lateral_convs = nn.ModuleList()
        self.fpn_convs = nn.ModuleList()
        for in_ch in in_channels[:-1]:
            self.lateral_convs.append(ConvModule(in_ch, channels, 1, inplace=True))
            self.fpn_convs.append(ConvModule(channels, channels, 3, padding=1, inplace=True))
        self.psp_bottleneck = ConvModule(in_channels[-1], channels, 3, padding=1, inplace=True)
        self.fpn_bottleneck = ConvModule(len(in_channels) * channels, channels, 3, padding=1, inplace=True)
        self.conv_seg = nn.Conv2d(channels, num_classes, 1)

    def psp_forward(self, inputs):
        return self.psp_bottleneck(inputs[-1])

    def forward(self, inputs, input_org_shape):
        # build laterals
        laterals = [
            lateral_conv(inputs[i])
            for i, lateral_conv in enumerate(self.lateral_convs)
        ]
        laterals.append(self.psp_forward(inputs))

        # build top-down path
        used_backbone_levels = len(laterals)
        for i in range(used_backbone_levels - 1, 0, -1):
            prev_shape = laterals[i - 1].shape[2:]
            laterals[i - 1] = laterals[i - 1] + resize(
                laterals[i],
                size=prev_shape,
                mode='bilinear',
                align_corners=self.align_corners)

        fpn_outs = [self.fpn_convs[i](laterals[i]) for i in range(used_backbone_levels - 1)]
        fpn_outs.append(laterals[-1])
        for i in range(used_backbone_levels - 1, 0, -1):
            fpn_outs[i] = resize(fpn_outs[i], size=fpn_outs[0].shape[2:], mode='bilinear',
                                 align_corners=self.align_corners)
        fpn_outs = torch.cat(fpn_outs, dim=1)
        output = self.fpn_bottleneck(fpn_outs)
        output = self.conv_seg(output)
        output = resize(output, size=input_org_shape, mode='bilinear', align_corners=self.align_corners)
        return output


def main():
    head = UPerHead()
    inputs = [torch.randn(2, 8, 16, 16), torch.randn(2, 16, 8, 8), torch.randn(2, 32, 4, 4)]
    depth_gt = torch.rand(2, 1, 32, 32)
    pred_depth = head(inputs, (32, 32))
    loss_train_iter = F.l1_loss(pred_depth, depth_gt)
    loss_train_iter.backward()
    return loss_train_iter.detach(), head.lateral_convs[0].conv.weight.grad


loss, lateral_grad = main()
