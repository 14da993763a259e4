# label: safe
# why: `s2 -= s2.mean(1, keepdim=True)` centres the log-scale of a GIN coupling in place, but s2 is the fresh result of `clamp * f_clamp(...)` (atan/tanh save their input or their own output, not s2) and mean() saves nothing, so with the block's built-in clamp activations the in-place centring is harmless (the PR rewrote it out of place after an error in its author's setup)
# source: https://github.com/vislearn/FrEIA/pull/171 (commit d6f4309, FrEIA/modules/coupling_layers.py GINCouplingBlock)
import torch
import torch.nn as nn

torch.manual_seed(0)


class GINCouplingBlock(nn.Module):
    def __init__(self, channels, subnet_constructor, clamp: float = 2., clamp_activation="ATAN", split_len=0.5):
        super().__init__()
        self.channels = channels
        self.split_len1 = round(self.channels * split_len)
        self.split_len2 = self.channels - self.split_len1
        self.clamp = clamp
        if clamp_activation == "ATAN":
            self.f_clamp = (lambda u: 0.636 * torch.atan(u))
        elif clamp_activation == "TANH":
            self.f_clamp = torch.tanh
        elif clamp_activation == "SIGMOID":
            self.f_clamp = (lambda u: 2. * (torch.sigmoid(u) - 0.5))
        self.subnet1 = subnet_constructor(self.split_len1, self.split_len2 * 2)
        self.subnet2 = subnet_constructor(self.split_len2, self.split_len1 * 2)

    def forward(self, x, c=[], rev=False, jac=True):
        x1, x2 = torch.split(x[0], [self.split_len1, self.split_len2], dim=1)

        if not rev:
            y1, j1 = self._coupling1(x1, x2)
            y2, j2 = self._coupling2(x2, y1)
        else:
            # names of x and y are swapped for the reverse computation
            y2, j2 = self._coupling2(x2, x1, rev=True)
            y1, j1 = self._coupling1(x1, y2, rev=True)

        return (torch.cat((y1, y2), 1),), j1 + j2

    def _coupling1(self, x1, u2, rev=False):
        a2 = self.subnet2(u2)
        s2, t2 = a2[:, :self.split_len1], a2[:, self.split_len1:]
        s2 = self.clamp * self.f_clamp(s2)
        s2 -= s2.mean(1, keepdim=True)

        if rev:
            y1 = (x1 - t2) * torch.exp(-s2)
            return y1, 0.
        else:
            y1 = torch.exp(s2) * x1 + t2
            return y1, 0.

    def _coupling2(self, x2, u1, rev=False):
        a1 = self.subnet1(u1)
        s1, t1 = a1[:, :self.split_len2], a1[:, self.split_len2:]
        s1 = self.clamp * self.f_clamp(s1)
        s1 -= s1.mean(1, keepdim=True)

        if rev:
            y2 = (x2 - t1) * torch.exp(-s1)
            return y2, 0.
        else:
            y2 = torch.exp(s1) * x2 + t1
            return y2, 0.


def subnet_fc(c_in, c_out):
    return nn.Sequential(nn.Linear(c_in, 16), nn.ReLU(), nn.Linear(16, c_out))


blocks = nn.ModuleList([GINCouplingBlock(4, subnet_fc, clamp_activation="ATAN"),
                        GINCouplingBlock(4, subnet_fc, clamp_activation="TANH")])
optimizer = torch.optim.Adam(blocks.parameters(), lr=1e-3)

x = torch.randn(8, 4)
z = (x,)
for block in blocks:
    z, _ = block(z)
# GIN is volume preserving: the log-det term is zero, so the NLL is just the Gaussian energy
nll = 0.5 * (z[0] ** 2).sum(1).mean()
with torch.no_grad():
    x_rec = z
    for block in reversed(blocks):
        x_rec, _ = block(x_rec, rev=True)
x_rec = x_rec[0]

optimizer.zero_grad()
nll.backward()
optimizer.step()
