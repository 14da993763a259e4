# label: hazard silent
# why: clebsch_gordan(..., cached=True) returns the lru_cache'd tensor itself and tensor_product_in_in scales it with C *= ..., so every later TensorProduct built from the same (l_out, l_1, l_2) reads the already-rescaled coefficients and gets a silently wrong mixing matrix.
# source: https://github.com/e3nn/e3nn/commit/42c4bf1e
from functools import lru_cache

import torch

torch.manual_seed(0)


def _clebsch_gordan(l1, l2, l3):
    # stand-in for the exact coefficient solver: a fixed, normalized [2l1+1, 2l2+1, 2l3+1] tensor
    g = torch.Generator().manual_seed(100 * l1 + 10 * l2 + l3)
    C = torch.randn(2 * l1 + 1, 2 * l2 + 1, 2 * l3 + 1, generator=g, dtype=torch.float64)
    return C / C.norm()


@lru_cache(maxsize=None)
def _cached_clebsch_gordan(l1, l2, l3, dtype, device):
    return _clebsch_gordan(l1, l2, l3).to(dtype=dtype, device=device)


def clebsch_gordan(l1, l2, l3, cached=False, dtype=None, device=None, like=None):
    if dtype is None:
        dtype = like.dtype if like is not None else torch.get_default_dtype()
    if device is None:
        device = like.device if like is not None else 'cpu'
    if cached:
        return _cached_clebsch_gordan(l1, l2, l3, dtype, device)
    return _clebsch_gordan(l1, l2, l3).to(dtype=dtype, device=device)


def selection_rule(l1, p1, l2, p2, lmax=None):
    return list(range(abs(l1 - l2), l1 + l2 + 1))


def dim(Rs):
    return sum(mul * (2 * l + 1) for mul, l, p in Rs)


def tensor_product_in_in(Rs_in1, Rs_in2, get_l_output=selection_rule, normalization='component'):
    Rs_out = []
    for mul_1, l_1, p_1 in Rs_in1:
        for mul_2, l_2, p_2 in Rs_in2:
            for l_out in get_l_output(l_1, p_1, l_2, p_2):
                Rs_out.append((mul_1 * mul_2, l_out, p_1 * p_2))

    clebsch_gordan_tensor = torch.zeros(dim(Rs_out), dim(Rs_in1), dim(Rs_in2))

    index_out = 0
    index_1 = 0
    for mul_1, l_1, p_1 in Rs_in1:
        dim_1 = mul_1 * (2 * l_1 + 1)
        index_2 = 0
        for mul_2, l_2, p_2 in Rs_in2:
            dim_2 = mul_2 * (2 * l_2 + 1)
            for l_out in get_l_output(l_1, p_1, l_2, p_2):
                dim_out = mul_1 * mul_2 * (2 * l_out + 1)
                C = clebsch_gordan(l_out, l_1, l_2, cached=True)
                if normalization == 'component':
                    C *= (2 * l_out + 1) ** 0.5  # <-- IPL002
                if normalization == 'norm':
                    C *= (2 * l_1 + 1) ** 0.5 * (2 * l_2 + 1) ** 0.5  # <-- IPL002
                I = torch.eye(mul_1 * mul_2).view(mul_1 * mul_2, mul_1, mul_2)
                m = torch.einsum("wuv,kij->wkuivj", I, C).reshape(dim_out, dim_1, dim_2)
                clebsch_gordan_tensor[index_out:index_out + dim_out, index_1:index_1 + dim_1, index_2:index_2 + dim_2] = m
                index_out += dim_out
            index_2 += dim_2
        index_1 += dim_1

    return Rs_out, clebsch_gordan_tensor


class TensorProduct(torch.nn.Module):
    def __init__(self, Rs_1, Rs_2, get_l_output=selection_rule):
        super().__init__()
        Rs_out, mixing_matrix = tensor_product_in_in(Rs_1, Rs_2, get_l_output)
        self.Rs_out = Rs_out
        self.register_buffer('mixing_matrix', mixing_matrix)

    def forward(self, features_1, features_2):
        *size_1, n_1 = features_1.size()
        features_1 = features_1.view(-1, n_1)
        *size_2, n_2 = features_2.size()
        features_2 = features_2.view(-1, n_2)
        output = torch.einsum('kij,zi,zj->zk', self.mixing_matrix, features_1, features_2)
        return output.view(*size_1, -1)


def main():
    Rs_1 = [(1, 0, 1), (1, 1, -1)]
    Rs_2 = [(1, 1, -1)]
    layer_1 = TensorProduct(Rs_1, Rs_2)
    layer_2 = TensorProduct(Rs_1, Rs_2)
    f1 = torch.randn(3, dim(Rs_1), requires_grad=True)
    f2 = torch.randn(3, dim(Rs_2))
    out = layer_2(layer_1(f1, f2)[:, :dim(Rs_1)], f2)
    out.pow(2).sum().backward()
    return layer_1.mixing_matrix, layer_2.mixing_matrix, f1.grad


mixing_1, mixing_2, f1_grad = main()
