# label: safe no-twin
# why: a buffer and a Parameter built with requires_grad=False are not leaves that require grad: updating them in place in forward is allowed and nothing saved them
# source: reduced from tianshou utils/net/discrete.py (NoisyLinear eps_p/eps_q) and speechbrain c_normalization.py (bench/UNTUNED.md, false alarms of the first run)
import torch
from torch import nn


class NoisyLinear(nn.Module):
    def __init__(self, n_in, n_out, track=True):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_out, n_in) * 0.1)
        self.eps_p = nn.Parameter(torch.zeros(n_in), requires_grad=False)
        self.eps_q = nn.Parameter(torch.zeros(n_out), requires_grad=False)
        if track:
            self.register_buffer("calls", torch.zeros(1))
        else:
            self.register_parameter("calls", None)

    def sample(self):
        self.eps_p.copy_(torch.randn(self.eps_p.shape))
        self.eps_q.copy_(torch.randn(self.eps_q.shape))

    def forward(self, x):
        self.sample()
        self.calls.add_(1)
        noisy = self.weight + torch.outer(self.eps_q, self.eps_p) * 0.01
        return x @ noisy.t()


torch.manual_seed(0)
layer = NoisyLinear(3, 2)
x = torch.randn(4, 3)
out = layer(x)
loss = out.pow(2).sum()
loss.backward()
