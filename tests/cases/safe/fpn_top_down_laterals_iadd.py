# label: safe
# why: FPN top-down pathway accumulates upsampled coarser maps into the lateral conv outputs with +=; interpolate and the 1x1 convs save nothing that is overwritten.
import torch
import torch.nn as nn
import torch.nn.functional as F


class FPN(nn.Module):
    def __init__(self, in_channels_list, out_channels):
        super().__init__()
        self.lateral_convs = nn.ModuleList(nn.Conv2d(c, out_channels, 1) for c in in_channels_list)
        self.fpn_convs = nn.ModuleList(
            nn.Conv2d(out_channels, out_channels, 3, padding=1) for _ in in_channels_list
        )

    def forward(self, inputs):
        laterals = [conv(x) for conv, x in zip(self.lateral_convs, inputs)]
        for i in range(len(laterals) - 1, 0, -1):
            prev_shape = laterals[i - 1].shape[2:]
            laterals[i - 1] += F.interpolate(laterals[i], size=prev_shape, mode="nearest")
        outs = [conv(lat) for conv, lat in zip(self.fpn_convs, laterals)]
        outs.append(F.max_pool2d(outs[-1], 1, stride=2))
        return outs


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.c2 = nn.Sequential(nn.Conv2d(3, 4, 3, stride=2, padding=1), nn.ReLU(inplace=True))
        self.c3 = nn.Sequential(nn.Conv2d(4, 8, 3, stride=2, padding=1), nn.ReLU(inplace=True))
        self.c4 = nn.Sequential(nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.ReLU(inplace=True))

    def forward(self, x):
        c2 = self.c2(x)
        c3 = self.c3(c2)
        c4 = self.c4(c3)
        return [c2, c3, c4]


torch.manual_seed(0)
backbone = Backbone()
neck = FPN([4, 8, 16], out_channels=4)
images = torch.randn(1, 3, 16, 16)
feats = neck(backbone(images))
out = torch.cat([f.mean(dim=(2, 3)) for f in feats], dim=1)
loss = sum(f.pow(2).mean() for f in feats)
loss.backward()
