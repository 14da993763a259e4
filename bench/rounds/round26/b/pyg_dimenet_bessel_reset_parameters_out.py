# label: hazard raises no-twin
# why: BesselBasisLayer.reset_parameters writes torch.arange(..., out=self.freq) straight into the freq Parameter with grad mode on, an in-place write to a leaf that requires grad.
# source: https://github.com/pyg-team/pytorch_geometric/pull/4424
import math

import torch

torch.manual_seed(0)

PI = math.pi


class Envelope(torch.nn.Module):
    def __init__(self, exponent):
        super().__init__()
        self.p = exponent + 1
        self.a = -(self.p + 1) * (self.p + 2) / 2
        self.b = self.p * (self.p + 2)
        self.c = -self.p * (self.p + 1) / 2

    def forward(self, x):
        p, a, b, c = self.p, self.a, self.b, self.c
        x_pow_p0 = x.pow(p - 1)
        x_pow_p1 = x_pow_p0 * x
        x_pow_p2 = x_pow_p1 * x
        return 1. / x + a * x_pow_p0 + b * x_pow_p1 + c * x_pow_p2


class BesselBasisLayer(torch.nn.Module):
    def __init__(self, num_radial, cutoff=5.0, envelope_exponent=5):
        super().__init__()
        self.cutoff = cutoff
        self.envelope = Envelope(envelope_exponent)

        self.freq = torch.nn.Parameter(torch.Tensor(num_radial))

        self.reset_parameters()

    def reset_parameters(self):
        torch.arange(1, self.freq.numel() + 1, out=self.freq).mul_(PI)  # <-- IPL003

    def forward(self, dist):
        dist = dist.unsqueeze(-1) / self.cutoff
        return self.envelope(dist) * (self.freq * dist).sin()


def main():
    rbf = BesselBasisLayer(num_radial=6, cutoff=5.0)
    pos = torch.randn(5, 3) * 2
    row, col = torch.triu_indices(5, 5, offset=1)
    dist = (pos[row] - pos[col]).norm(dim=-1)
    out = rbf(dist)
    out.pow(2).sum().backward()
    return out.detach(), rbf.freq.grad


rbf_out, freq_grad = main()
