# label: hazard raises
# why: every FPN lateral conv ends in nn.ReLU(inplace=False), whose backward still needs its own output, and the top-down loop then adds the upsampled coarser level into that saved ReLU output in place with `laterals[i - 1] += F.interpolate(...)`.
# source: https://github.com/taohan10200/DRNet/issues/13
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Conv2d(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, NL='relu', same_padding=False, bn=True, bias=True):
        super(Conv2d, self).__init__()
        padding = int((kernel_size - 1) // 2) if same_padding else 0
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding=padding, bias=bias)
        self.bn = nn.BatchNorm2d(out_channels) if bn else None
        if NL == 'relu':
            self.relu = nn.ReLU(inplace=False)
        elif NL == 'prelu':
            self.relu = nn.PReLU()
        else:
            self.relu = None

    def forward(self, x):
        x = self.conv(x)
        if self.bn is not None:
            x = self.bn(x)
        if self.relu is not None:
            x = self.relu(x)
        return x


class FPN(nn.Module):
    def __init__(self, in_channels, out_channels, num_outs, start_level=0, end_level=-1, bn=True):
        super(FPN, self).__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.num_ins = len(in_channels)
        self.num_outs = num_outs
        self.backbone_end_level = self.num_ins if end_level == -1 else end_level
        self.start_level = start_level
        self.lateral_convs = nn.ModuleList()
        self.fpn_convs = nn.ModuleList()
        for i in range(self.start_level, self.backbone_end_level):
            l_conv = Conv2d(in_channels[i], out_channels, 1, bn=bn, bias=not bn, same_padding=True)
            fpn_conv = Conv2d(out_channels, out_channels, 3, bn=bn, bias=not bn, same_padding=True)
            self.lateral_convs.append(l_conv)
            self.fpn_convs.append(fpn_conv)

    def forward(self, inputs):
        assert len(inputs) == len(self.in_channels)
        # build laterals
        laterals = [lateral_conv(inputs[i + self.start_level]) for i, lateral_conv in enumerate(self.lateral_convs)]

        # build top-down path
        used_backbone_levels = len(laterals)
        for i in range(used_backbone_levels - 1, 0, -1):
            prev_shape = laterals[i - 1].shape[2:]
            laterals[i - 1] += F.interpolate(laterals[i], size=prev_shape, mode='nearest')  # <-- IPL001

        outs = [self.fpn_convs[i](laterals[i]) for i in range(used_backbone_levels)]
        return tuple(outs)


class VGG16_FPN(nn.Module):
    def __init__(self):
        super(VGG16_FPN, self).__init__()
        self.layer1 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(inplace=True))
        self.layer2 = nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(inplace=True))
        self.layer3 = nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(16, 16, 3, padding=1), nn.ReLU(inplace=True))
        self.neck = FPN([8, 16, 16], 8, 3)
        self.loc_head = nn.Conv2d(24, 1, 1)

    def forward(self, x):
        f = []
        x = self.layer1(x)
        f.append(x)
        x = self.layer2(x)
        f.append(x)
        x = self.layer3(x)
        f.append(x)
        f = self.neck(f)
        f = torch.cat([f[0], F.interpolate(f[1], scale_factor=2, mode='bilinear', align_corners=True),
                       F.interpolate(f[2], scale_factor=4, mode='bilinear', align_corners=True)], dim=1)
        return self.loc_head(f)


def main():
    model = VGG16_FPN()
    img = torch.randn(2, 3, 16, 16)
    den_gt = torch.rand(2, 1, 16, 16)
    pre_map = model(img)
    counting_mse_loss = F.mse_loss(pre_map, den_gt)
    counting_mse_loss.backward()
    return counting_mse_loss.detach(), model.neck.lateral_convs[0].conv.weight.grad


loss, lateral_grad = main()
