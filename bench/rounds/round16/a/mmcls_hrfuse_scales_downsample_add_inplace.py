# label: hazard raises
# why: HRFuseScales adds the next scale with `feat += ...` onto the ConvModule output, which ends in an in-place ReLU whose output is saved for backward.
# source: https://github.com/open-mmlab/mmpretrain/commit/517257a54a8663d7beb61678b126889c97d46b6f
import torch
import torch.nn as nn

torch.manual_seed(0)


class ConvModule(nn.Module):
    """conv -> norm -> act, as mmcv.cnn.ConvModule with its default inplace ReLU."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, norm_cfg=None, bias=True,
                 inplace=True):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, bias=bias)
        self.norm = nn.BatchNorm2d(out_channels, momentum=norm_cfg.get('momentum', 0.1) if norm_cfg else 0.1)
        self.activate = nn.ReLU(inplace=inplace)

    def forward(self, x):
        return self.activate(self.norm(self.conv(x)))


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, in_channels, out_channels):
        super().__init__()
        mid_channels = out_channels // self.expansion
        self.conv1 = nn.Conv2d(in_channels, mid_channels, 1, bias=False)
        self.norm1 = nn.BatchNorm2d(mid_channels)
        self.conv2 = nn.Conv2d(mid_channels, mid_channels, 3, padding=1, bias=False)
        self.norm2 = nn.BatchNorm2d(mid_channels)
        self.conv3 = nn.Conv2d(mid_channels, out_channels, 1, bias=False)
        self.norm3 = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = nn.Sequential(nn.Conv2d(in_channels, out_channels, 1, bias=False),
                                        nn.BatchNorm2d(out_channels))

    def forward(self, x):
        identity = x
        out = self.relu(self.norm1(self.conv1(x)))
        out = self.relu(self.norm2(self.conv2(out)))
        out = self.norm3(self.conv3(out))
        identity = self.downsample(x)
        out += identity
        out = self.relu(out)
        return out


def ResLayer(block, in_channels, out_channels, num_blocks=1, stride=1):
    return nn.Sequential(*[block(in_channels if i == 0 else out_channels, out_channels) for i in range(num_blocks)])


class HRFuseScales(nn.Module):

    def __init__(self, in_channels, norm_cfg=dict(type='BN', momentum=0.1)):
        super(HRFuseScales, self).__init__()
        self.in_channels = in_channels
        self.norm_cfg = norm_cfg

        block_type = Bottleneck
        out_channels = [8, 16, 32, 64]

        increase_layers = []
        for i in range(len(in_channels)):
            increase_layers.append(
                ResLayer(block_type, in_channels=in_channels[i], out_channels=out_channels[i], num_blocks=1, stride=1))
        self.increase_layers = nn.ModuleList(increase_layers)

        downsample_layers = []
        for i in range(len(in_channels) - 1):
            downsample_layers.append(
                ConvModule(in_channels=out_channels[i], out_channels=out_channels[i + 1], kernel_size=3, stride=2,
                           padding=1, norm_cfg=self.norm_cfg, bias=True))
        self.downsample_layers = nn.ModuleList(downsample_layers)

        self.final_layer = ConvModule(in_channels=out_channels[3], out_channels=32, kernel_size=1,
                                      norm_cfg=self.norm_cfg, bias=True)

    def forward(self, x):
        assert isinstance(x, tuple) and len(x) == len(self.in_channels)

        feat = self.increase_layers[0](x[0])
        for i in range(len(self.downsample_layers)):
            feat = self.downsample_layers[i](feat)
            feat += self.increase_layers[i + 1](x[i + 1])  # <-- IPL001: in-place add on the ConvModule's ReLU output

        return self.final_layer(feat)


neck = HRFuseScales(in_channels=(4, 8, 16, 32))
head = nn.Linear(32, 10)
hrnet_outs = tuple(torch.randn(2, c, 16 // (2 ** i), 16 // (2 ** i)) for i, c in enumerate((4, 8, 16, 32)))
feat = neck(hrnet_outs)
cls_score = head(feat.mean(dim=(2, 3)))
loss = nn.functional.cross_entropy(cls_score, torch.tensor([1, 7]))
loss.backward()
