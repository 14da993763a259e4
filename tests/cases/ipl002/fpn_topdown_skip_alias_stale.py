# label: hazard silent
# why: `skip` aliases the lateral map, so `lateral += up` also changes the skip that the fuse conv later reads as the pre-top-down feature
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TinyFPN(nn.Module):
    def __init__(self, in_channels=(8, 16), out_ch=8):
        super().__init__()
        self.lateral = nn.ModuleList(nn.Conv2d(c, out_ch, 1) for c in in_channels)
        self.fuse = nn.Conv2d(2 * out_ch, out_ch, 3, padding=1)

    def forward(self, feats):
        c3, c4 = feats
        p4 = self.lateral[1](c4)
        lateral = self.lateral[0](c3)
        skip = lateral  # raw lateral, concatenated again in the fusion step
        up = F.interpolate(p4, size=lateral.shape[-2:], mode="nearest")
        lateral += up  # <-- IPL002
        p3 = lateral
        fused = self.fuse(torch.cat([p3, skip], dim=1))
        return fused, p4


model = TinyFPN()
c3 = torch.randn(2, 8, 8, 8)
c4 = torch.randn(2, 16, 4, 4)
fused, p4 = model((c3, c4))
loss = fused.pow(2).mean() + p4.abs().mean()
loss.backward()
grad_fuse = model.fuse.weight.grad.clone()
grad_lat0 = model.lateral[0].weight.grad.clone()
grad_lat1 = model.lateral[1].weight.grad.clone()
