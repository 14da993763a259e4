# label: safe no-twin
# why: the maintainers' fix passes `conv.weights.data` to generalized_he_init, so the in-place initialisation writes plain storage before any graph exists and training afterwards is unaffected. (no twin: the helper is meant to fill the caller's tensor, which an out-of-place rewrite cannot express)
# source: https://github.com/QUVA-Lab/e2cnn/issues/34
import math
from collections import defaultdict

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BasisExpansion(nn.Module):
    """Maps the learnable coefficients onto a (out, in, k, k) filter through a fixed basis."""

    def __init__(self, in_channels, out_channels, kernel_size, n_basis):
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.n_basis = n_basis
        basis = torch.randn(n_basis, out_channels, in_channels, kernel_size, kernel_size)
        self.register_buffer("sampled_basis", basis)

    def dimension(self):
        return self.n_basis

    def get_basis_info(self):
        for w in range(self.n_basis):
            yield {
                "in_irreps_position": w % self.in_channels,
                "out_irreps_position": w % self.out_channels,
                "in_irrep": "irrep_%d" % (w % 2),
                "out_irrep": "irrep_%d" % (w % 3),
            }

    def forward(self, weights):
        return torch.einsum("b,boikl->oikl", weights, self.sampled_basis)


def _generalized_he_init_variances(basisexpansion: BasisExpansion):
    vars = torch.ones((basisexpansion.dimension(),))

    inputs_count = defaultdict(lambda: set())
    basis_count = defaultdict(int)

    basis_info = list(basisexpansion.get_basis_info())

    for attr in basis_info:
        i, o = attr["in_irreps_position"], attr["out_irreps_position"]
        in_irrep, out_irrep = attr["in_irrep"], attr["out_irrep"]
        inputs_count[o].add(in_irrep)
        basis_count[(in_irrep, o)] += 1

    for o in inputs_count.keys():
        inputs_count[o] = len(inputs_count[o])

    for w, attr in enumerate(basis_info):
        i, o = attr["in_irreps_position"], attr["out_irreps_position"]
        in_irrep, out_irrep = attr["in_irrep"], attr["out_irrep"]
        vars[w] = 1. / math.sqrt(inputs_count[o] * basis_count[(in_irrep, o)])

    return vars


def generalized_he_init(tensor: torch.Tensor, basisexpansion: BasisExpansion):
    assert tensor.shape == (basisexpansion.dimension(),)
    vars = _generalized_he_init_variances(basisexpansion)
    tensor[:] = vars * torch.randn_like(tensor)


class R2Conv(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, n_basis=12):
        super().__init__()
        self.basisexpansion = BasisExpansion(in_channels, out_channels, kernel_size, n_basis)
        self.weights = nn.Parameter(torch.zeros(self.basisexpansion.dimension()), requires_grad=True)
        self.padding = kernel_size // 2

    def forward(self, x):
        filter = self.basisexpansion(self.weights)
        return F.conv2d(x, filter, padding=self.padding)


def main():
    conv = R2Conv(2, 4, 3)
    # as done in metalearning-symmetries/generate_synthetic_data.py
    generalized_he_init(conv.weights.data, conv.basisexpansion)
    x = torch.randn(2, 2, 8, 8)
    loss = conv(x).pow(2).mean()
    loss.backward()
    return loss.detach(), conv.weights.grad


loss, weights_grad = main()
