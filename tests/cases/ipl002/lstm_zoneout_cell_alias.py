# label: hazard silent
# why: c_prev is another name for c, so c.mul_(f) also rewrites the previous cell state that zoneout is supposed to keep.
import torch
import torch.nn as nn

torch.manual_seed(0)


class ZoneoutLSTMCell(nn.Module):
    def __init__(self, d_in, d_h):
        super().__init__()
        self.lin = nn.Linear(d_in + d_h, 4 * d_h)

    def forward(self, x_t, h, c, keep):
        i, f, g, o = self.lin(torch.cat([x_t, h], dim=1)).chunk(4, dim=1)
        c_prev = c
        c.mul_(torch.sigmoid(f))  # <-- IPL002: c_prev aliases c
        c = c + torch.sigmoid(i) * torch.tanh(g)
        c = keep * c_prev + (1 - keep) * c
        h = torch.sigmoid(o) * torch.tanh(c)
        return h, c


cell = ZoneoutLSTMCell(3, 5)
seq = torch.randn(4, 2, 3)
keeps = (torch.rand(4, 2, 5) < 0.3).float()
h = torch.zeros(2, 5)
c = torch.zeros(2, 5)
hs = []
for t in range(seq.shape[0]):
    h, c = cell(seq[t], h, c, keeps[t])
    hs.append(h)
outputs = torch.stack(hs)
outputs.sum().backward()
