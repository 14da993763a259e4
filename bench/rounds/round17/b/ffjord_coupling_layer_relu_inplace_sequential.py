# label: safe
# why: the in-place ReLU in the coupling network's Sequential only overwrites the first Linear's output, which no backward formula needs, so the flow's log-density and gradients are unaffected.
# source: https://github.com/rtqichen/ffjord/commit/b59d95ab8f11f3d6dc93c0b0210cb78109689975
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class CouplingLayer(nn.Module):
    def __init__(self, d, intermediate_dim=32, swap=False):
        nn.Module.__init__(self)
        self.d = d // 2
        self.swap = swap
        self.net_s_t = nn.Sequential(
            nn.Linear(self.d, intermediate_dim), nn.ReLU(inplace=True), nn.Linear(intermediate_dim, self.d * 2)
        )

    def forward(self, x, logpx=None, reverse=False):
        if self.swap:
            x = torch.cat([x[:, self.d:], x[:, :self.d]], 1)
        s_t = self.net_s_t(x[:, :self.d])
        scale = torch.sigmoid(s_t[:, :self.d] + 2.)
        shift = s_t[:, self.d:]
        logdetjac = torch.mean(torch.log(scale).view(scale.shape[0], -1), 1, keepdim=True)
        if not reverse:
            y1 = x[:, self.d:] * scale + shift
            delta_logp = -logdetjac
        else:
            y1 = (x[:, self.d:] - shift) / scale
            delta_logp = logdetjac
        y = torch.cat([x[:, :self.d], y1], 1) if not self.swap else torch.cat([y1, x[:, :self.d]], 1)
        if logpx is None:
            return y
        else:
            return y, logpx + delta_logp


class SequentialFlow(nn.Module):
    def __init__(self, layers_list):
        super().__init__()
        self.chain = nn.ModuleList(layers_list)

    def forward(self, x, logpx=None, reverse=False):
        inds = range(len(self.chain)) if not reverse else range(len(self.chain) - 1, -1, -1)
        for i in inds:
            x, logpx = self.chain[i](x, logpx, reverse=reverse)
        return x, logpx


def standard_normal_logprob(z):
    log_z = -0.5 * math.log(2 * math.pi)
    return log_z - z.pow(2) / 2


model = SequentialFlow([CouplingLayer(4, swap=(i % 2 == 1)) for i in range(4)])
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
x = torch.randn(16, 4) * 2 + 1
zero = torch.zeros(x.shape[0], 1)
z, delta_logp = model(x, zero)
logpz = standard_normal_logprob(z).sum(1, keepdim=True)
logpx = logpz - delta_logp
loss = -torch.mean(logpx)
optimizer.zero_grad()
loss.backward()
