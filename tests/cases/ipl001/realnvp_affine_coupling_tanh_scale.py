# label: hazard raises
# why: the coupling rescales the tanh output in place with *=, but tanh saved that output for backward.
import torch
import torch.nn as nn


class AffineCoupling(nn.Module):
    """RealNVP-style affine coupling layer with a bounded log-scale."""

    def __init__(self, dim, hidden):
        super().__init__()
        self.half = dim // 2
        self.net = nn.Sequential(
            nn.Linear(self.half, hidden),
            nn.ReLU(inplace=True),
            nn.Linear(hidden, 2 * (dim - self.half)),
        )
        self.scale_factor = nn.Parameter(torch.ones(dim - self.half))

    def forward(self, x):
        x1, x2 = x[:, :self.half], x[:, self.half:]
        h = self.net(x1)
        log_s, t = h.chunk(2, dim=1)
        log_s = torch.tanh(log_s)
        log_s *= self.scale_factor  # <-- IPL001
        y2 = x2 * torch.exp(log_s) + t
        logdet = log_s.sum(dim=1)
        return torch.cat([x1, y2], dim=1), logdet


torch.manual_seed(0)
flow = AffineCoupling(dim=6, hidden=16)
x = torch.randn(4, 6)
z, logdet = flow(x)
prior_logp = -0.5 * (z ** 2).sum(dim=1)
loss = -(prior_logp + logdet).mean()
loss.backward()
