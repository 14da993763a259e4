# label: hazard silent
# why: normflows' Shift flow does `z += self.shift` in inverse(), and NormalizingFlow.forward_kld passes the caller's data batch straight in (z = x), so every loss evaluation shifts the training batch itself and a second evaluation on the same batch reads already-shifted data.
# source: https://github.com/VincentStimper/normalizing-flows/blob/c6616b1a9f04c0e894b9e045e66bd504db17ef5e/normflows/transforms.py (Shift.forward/inverse; NormalizingFlow.forward_kld in normflows/core.py)
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class Flow(nn.Module):
    def forward(self, z):
        raise NotImplementedError

    def inverse(self, z):
        raise NotImplementedError


class Shift(Flow):
    """Shift data by a fixed constant (default -0.5: [0, 1] -> [-0.5, 0.5])"""

    def __init__(self, shift=-0.5):
        super().__init__()
        self.shift = shift

    def forward(self, z):
        z -= self.shift
        log_det = torch.zeros(z.shape[0], dtype=z.dtype, device=z.device)
        return z, log_det

    def inverse(self, z):
        z += self.shift  # <-- IPL004
        log_det = torch.zeros(z.shape[0], dtype=z.dtype, device=z.device)
        return z, log_det


class AffineConstFlow(Flow):
    def __init__(self, shape):
        super().__init__()
        self.s = nn.Parameter(torch.zeros(shape)[None])
        self.t = nn.Parameter(torch.zeros(shape)[None])

    def forward(self, z):
        z_ = z * torch.exp(self.s) + self.t
        return z_, torch.sum(self.s) * torch.ones(z.shape[0])

    def inverse(self, z):
        z_ = (z - self.t) * torch.exp(-self.s)
        return z_, -torch.sum(self.s) * torch.ones(z.shape[0])


class DiagGaussian(nn.Module):
    def __init__(self, shape):
        super().__init__()
        self.shape = (shape,)
        self.d = shape

    def log_prob(self, z):
        return -0.5 * self.d * math.log(2 * math.pi) - 0.5 * torch.sum(z ** 2, dim=1)


class NormalizingFlow(nn.Module):
    def __init__(self, q0, flows):
        super().__init__()
        self.q0 = q0
        self.flows = nn.ModuleList(flows)

    def forward_kld(self, x):
        log_q = torch.zeros(len(x), device=x.device)
        z = x
        for i in range(len(self.flows) - 1, -1, -1):
            z, log_det = self.flows[i].inverse(z)
            log_q += log_det
        log_q += self.q0.log_prob(z)
        return -torch.mean(log_q)


def main():
    model = NormalizingFlow(DiagGaussian(4), [AffineConstFlow(4), Shift(-0.5)])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    x = torch.rand(32, 4)  # image-like data in [0, 1]
    for it in range(3):
        optimizer.zero_grad()
        loss = model.forward_kld(x)
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        val_loss = model.forward_kld(x)
    return loss.detach(), val_loss, model.flows[0].t.detach().clone()


loss, val_loss, t = main()
