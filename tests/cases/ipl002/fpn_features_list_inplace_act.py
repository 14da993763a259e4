# label: hazard silent
# why: the backbone records pre-activation features in a list for the FPN and then applies its ReLU(inplace=True) module to the same tensor, silently rectifying the stored features.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Backbone(nn.Module):
    def __init__(self, chans=(3, 4, 8)):
        super().__init__()
        self.convs = nn.ModuleList(
            [nn.Conv2d(a, b, 3, stride=2, padding=1, bias=False) for a, b in zip(chans[:-1], chans[1:])]
        )
        self.bns = nn.ModuleList([nn.BatchNorm2d(b) for b in chans[1:]])
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        feats = []
        for conv, bn in zip(self.convs, self.bns):
            x = bn(conv(x))
            feats.append(x)  # pre-activation feature map for the neck
            x = self.act(x)  # <-- IPL002: mutates the tensor just stored in `feats`
        return feats


class FPN(nn.Module):
    def __init__(self, in_chans=(4, 8), out_ch=4):
        super().__init__()
        self.lateral = nn.ModuleList([nn.Conv2d(c, out_ch, 1) for c in in_chans])

    def forward(self, feats):
        laterals = [l(f) for l, f in zip(self.lateral, feats)]
        top = laterals[-1]
        fused = laterals[0] + F.interpolate(top, size=laterals[0].shape[-2:], mode="nearest")
        return fused


torch.manual_seed(0)
backbone = Backbone()
neck = FPN()
img = torch.randn(2, 3, 8, 8)
fused = neck(backbone(img))
loss = fused.pow(2).mean()
loss.backward()
