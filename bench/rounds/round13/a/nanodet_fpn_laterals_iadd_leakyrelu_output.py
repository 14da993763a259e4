# label: hazard raises
# why: with LeakyReLU lateral convs (inplace=True activation), `laterals[i - 1] += F.interpolate(...)` overwrites an activation output that LeakyReLU's backward saved.
# source: https://github.com/RangiLyu/nanodet/pull/493
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def act_layers(name):
    if name == "ReLU":
        return nn.ReLU(inplace=True)
    elif name == "LeakyReLU":
        return nn.LeakyReLU(negative_slope=0.1, inplace=True)
    elif name is None:
        return None
    raise NotImplementedError(name)


class ConvModule(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, norm_cfg=None, activation="ReLU"):
        super(ConvModule, self).__init__()
        self.with_norm = norm_cfg is not None
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, bias=not self.with_norm)
        if self.with_norm:
            self.bn = nn.BatchNorm2d(out_channels)
        self.act = act_layers(activation)

    def forward(self, x):
        x = self.conv(x)
        if self.with_norm:
            x = self.bn(x)
        if self.act is not None:
            x = self.act(x)
        return x


class FPN(nn.Module):
    def __init__(self, in_channels, out_channels, num_outs, start_level=0, end_level=-1, norm_cfg=None, activation=None):
        super(FPN, self).__init__()
        assert isinstance(in_channels, list)
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.num_ins = len(in_channels)
        self.num_outs = num_outs
        if end_level == -1:
            self.backbone_end_level = self.num_ins
        else:
            self.backbone_end_level = end_level
        self.start_level = start_level
        self.lateral_convs = nn.ModuleList()
        for i in range(self.start_level, self.backbone_end_level):
            l_conv = ConvModule(in_channels[i], out_channels, 1, norm_cfg=norm_cfg, activation=activation)
            self.lateral_convs.append(l_conv)

    def forward(self, inputs):
        assert len(inputs) == len(self.in_channels)
        laterals = [lateral_conv(inputs[i + self.start_level]) for i, lateral_conv in enumerate(self.lateral_convs)]
        used_backbone_levels = len(laterals)
        for i in range(used_backbone_levels - 1, 0, -1):
            laterals[i - 1] += F.interpolate(laterals[i], scale_factor=2, mode="bilinear")  # <-- IPL001: adds in place into a LeakyReLU(inplace=True) output that autograd saved

        outs = [laterals[i] for i in range(used_backbone_levels)]
        return tuple(outs)


fpn = FPN(in_channels=[4, 8, 16], out_channels=6, num_outs=3, norm_cfg=dict(type="BN"), activation="LeakyReLU")
head = nn.Conv2d(6, 3, 1)
feats = [torch.randn(2, 4, 8, 8), torch.randn(2, 8, 4, 4), torch.randn(2, 16, 2, 2)]
fpn_outs = fpn(feats)
loss = sum(head(o).pow(2).mean() for o in fpn_outs)
loss.backward()
