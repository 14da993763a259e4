# label: hazard silent
# why: z = z_pre.sigmoid_() makes z_pre the gate itself, so the requested dz/dz_pre comes back as ones rather than sigmoid'(z_pre).
import torch
import torch.nn as nn
from torch import autograd

torch.manual_seed(0)


class GRUGateProbe(nn.Module):
    def __init__(self, d_in, d_h):
        super().__init__()
        self.wz = nn.Linear(d_in + d_h, d_h)

    def forward(self, x, h):
        return self.wz(torch.cat([x, h], dim=1))


probe = GRUGateProbe(3, 4)
x = torch.randn(2, 3)
h = torch.randn(2, 4)

z_pre = probe(x, h)
z = z_pre.sigmoid_()  # <-- IPL006: z_pre is differentiated against below
(gate_slope,) = autograd.grad(z.sum(), z_pre)
saturation = (gate_slope < 0.1).float().mean()
