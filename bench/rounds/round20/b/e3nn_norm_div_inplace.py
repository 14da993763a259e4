# label: hazard raises
# why: Norm divides the output of `sub.norm(2, dim=-1)` in place with `sub.div_(...)`, but the norm's backward needs that very result, so backprop through the README example raises.
# source: https://github.com/e3nn/e3nn/commit/b4e33ee8fda492498b27ef85eb9f9eb1e947df68
import math

import torch

torch.manual_seed(0)


def simplify(Rs):
    out = []
    for mul, l, p in Rs:
        if out and out[-1][1:] == (l, p):
            out[-1] = (out[-1][0] + mul, l, p)
        elif mul > 0:
            out.append((mul, l, p))
    return out


def dim(Rs):
    return sum(mul * (2 * l + 1) for mul, l, _ in Rs)


class GaussianRadialModel(torch.nn.Module):
    def __init__(self, number_of_basis, max_radius, out_dim):
        super().__init__()
        self.centers = torch.linspace(0, max_radius, number_of_basis)
        self.width = max_radius / (number_of_basis - 1)
        self.lin = torch.nn.Linear(number_of_basis, out_dim)

    def forward(self, r):
        basis = torch.exp(-((r.unsqueeze(-1) - self.centers) / self.width) ** 2)
        return self.lin(basis)


class Convolution(torch.nn.Module):
    """Scalar radial filter times features: equivariant for every irrep block."""

    def __init__(self, Rs_in, Rs_out):
        super().__init__()
        self.Rs_in = simplify(Rs_in)
        self.Rs_out = simplify(Rs_out)
        assert [l for _, l, _ in self.Rs_in if l == 1]
        self.mul_in = sum(mul for mul, l, _ in self.Rs_in if l == 1)
        self.mul_out = self.Rs_out[0][0]
        self.radial = GaussianRadialModel(3, 3.0, self.mul_in * self.mul_out)

    def forward(self, features, geometry, out_geometry):
        rel = geometry.unsqueeze(1) - out_geometry.unsqueeze(2)  # [batch, a, b, 3]
        r = rel.norm(dim=-1)
        w = self.radial(r).view(*r.shape, self.mul_out, self.mul_in)
        vec = features[..., 1:].reshape(*features.shape[:-1], self.mul_in, 3)  # drop the scalar
        out = torch.einsum("zabuv,zbvi->zaui", w, vec)
        return out.reshape(*out.shape[:-2], -1)


class Norm(torch.nn.Module):
    def __init__(self, Rs, normalization='component'):
        super().__init__()
        Rs = simplify(Rs)
        n = sum(mul for mul, _, _ in Rs)
        self.Rs_in = Rs
        self.Rs_out = [(n, 0, +1)]
        self.normalization = normalization

    def forward(self, features):
        *size, n = features.size()
        output = []
        index = 0
        for mul, l, _ in self.Rs_in:
            sub = features.narrow(-1, index, mul * (2 * l + 1)).reshape(*size, mul, 2 * l + 1)  # [..., u, i]
            index += mul * (2 * l + 1)

            sub = sub.norm(2, dim=-1)  # [..., u]

            if self.normalization == 'component':
                sub.div_((2 * l + 1) ** 0.5)  # <-- IPL001

            output.append(sub)
        assert index == n

        return torch.cat(output, dim=-1)


def main():
    Rs_in = [(1, 0, 1), (2, 1, -1)]  # one scalar plus two vectors
    Rs_out = [(1, 1, -1)]  # one vector
    conv = Convolution(Rs_in, Rs_out)
    norm = Norm(Rs_out)

    n = 5
    features = torch.randn(1, n, dim(Rs_in), requires_grad=True)
    in_geometry = torch.randn(1, n, 3)
    out_geometry = torch.zeros(1, 1, 3)

    out = norm(conv(features, in_geometry, out_geometry))
    out.sum().backward()
    return out.detach(), features.grad, conv.radial.lin.weight.grad


out, features_grad, radial_grad = main()
