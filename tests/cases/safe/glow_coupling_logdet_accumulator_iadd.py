# label: safe
# why: the flow accumulates log-determinants with += into a fresh zeros tensor and a sum output, and the affine transform itself is computed out of place.
import torch
import torch.nn as nn


class ActNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.loc = nn.Parameter(torch.zeros(dim))
        self.log_scale = nn.Parameter(torch.zeros(dim))

    def forward(self, x, logdet):
        y = (x + self.loc) * torch.exp(self.log_scale)
        logdet += self.log_scale.sum()
        return y, logdet


class AffineCoupling(nn.Module):
    def __init__(self, dim, hidden=16):
        super().__init__()
        self.half = dim // 2
        self.net = nn.Sequential(nn.Linear(self.half, hidden), nn.ReLU(inplace=True),
                                 nn.Linear(hidden, 2 * (dim - self.half)))

    def forward(self, x, logdet):
        x1, x2 = x[:, :self.half], x[:, self.half:]
        log_s, t = self.net(x1).chunk(2, dim=1)
        log_s = torch.tanh(log_s)
        y2 = x2 * torch.exp(log_s) + t
        logdet += log_s.sum(dim=1)
        return torch.cat([y2, x1], dim=1), logdet


class Flow(nn.Module):
    def __init__(self, dim, n_steps=3):
        super().__init__()
        self.steps = nn.ModuleList()
        for _ in range(n_steps):
            self.steps.append(ActNorm(dim))
            self.steps.append(AffineCoupling(dim))

    def forward(self, x):
        logdet = torch.zeros(x.shape[0])
        for step in self.steps:
            x, logdet = step(x, logdet)
        return x, logdet


torch.manual_seed(0)
flow = Flow(dim=4)
x = torch.randn(5, 4)
z, logdet = flow(x)
loss = (0.5 * z.pow(2).sum(dim=1) - logdet).mean()
loss.backward()
