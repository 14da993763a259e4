# label: safe
# why: the alias `skip` of the lateral map is fully consumed (concat + conv) before `lateral += up`; nothing reads it afterwards
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TinyFPN(nn.Module):
    def __init__(self, in_channels=(8, 16), out_ch=8):
        super().__init__()
        self.lateral = nn.ModuleList(nn.Conv2d(c, out_ch, 1) for c in in_channels)
        self.aux = nn.Conv2d(2 * out_ch, out_ch, 3, padding=1)
        self.smooth = nn.Conv2d(out_ch, out_ch, 3, padding=1)

    def forward(self, feats):
        c3, c4 = feats
        p4 = self.lateral[1](c4)
        lateral = self.lateral[0](c3)
        up = F.interpolate(p4, size=lateral.shape[-2:], mode="nearest")
        skip = lateral
        aux = self.aux(torch.cat([skip, up], dim=1))  # reads the raw lateral now
        lateral += up
        p3 = self.smooth(lateral)
        return p3, p4, aux


model = TinyFPN()
c3 = torch.randn(2, 8, 8, 8)
c4 = torch.randn(2, 16, 4, 4)
p3, p4, aux = model((c3, c4))
loss = p3.pow(2).mean() + p4.abs().mean() + 0.5 * aux.pow(2).mean()
loss.backward()
grad_aux = model.aux.weight.grad.clone()
grad_lat0 = model.lateral[0].weight.grad.clone()
grad_smooth = model.smooth.weight.grad.clone()
