# label: safe
# why: the fix drops requires_grad from the zero buffer and accumulates with plain `out[i] += ...` / `out[i] /= ...`, which autograd records as copy-slices on a fresh non-leaf buffer, so the kernel MLP receives its gradient and nothing saved for backward is overwritten.
# source: https://github.com/neuraloperator/neuraloperator/commit/53b7f2d8081fe96df91c4ff4c46ebf7e9e104927
from typing import Literal

import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)


def segment_csr(src: torch.Tensor, indptr: torch.Tensor, reduce: Literal['mean', 'sum'], use_scatter=True):
    """segment_csr reduces all entries of a CSR-formatted matrix by summing or averaging over neighbors."""
    if reduce not in ['mean', 'sum']:
        raise ValueError("reduce must be one of 'mean', 'sum'")
    n_nbrs = indptr[1:] - indptr[:-1]  # end indices - start indices
    output_shape = list(src.shape)
    output_shape[0] = indptr.shape[0] - 1

    out = torch.zeros(output_shape, device=src.device)

    for i, start in enumerate(indptr[:-1]):
        if start == src.shape[0]:  # if the last neighborhoods are empty, skip
            break
        for j in range(n_nbrs[i]):
            out[i] += src[start + j]
        if reduce == 'mean':
            out[i] /= n_nbrs[i]
    return out


class MLPLinear(nn.Module):
    def __init__(self, layers, non_linearity=F.gelu):
        super().__init__()
        self.n_layers = len(layers) - 1
        self.fcs = nn.ModuleList([nn.Linear(layers[j], layers[j + 1]) for j in range(self.n_layers)])
        self.non_linearity = non_linearity

    def forward(self, x):
        for i, fc in enumerate(self.fcs):
            x = fc(x)
            if i != self.n_layers - 1:
                x = self.non_linearity(x)
        return x


class IntegralTransform(nn.Module):
    def __init__(self, mlp_layers, transform_type="linear"):
        super().__init__()
        self.transform_type = transform_type
        self.mlp = MLPLinear(layers=mlp_layers)

    def forward(self, y, neighbors, x=None, f_y=None, weights=None):
        if x is None:
            x = y
        rep_features = y[neighbors["neighbors_index"]]
        if f_y is not None:
            in_features = f_y[neighbors["neighbors_index"]]
        num_reps = neighbors["neighbors_row_splits"][1:] - neighbors["neighbors_row_splits"][:-1]
        self_features = torch.repeat_interleave(x, num_reps, dim=0)
        agg_features = torch.cat([rep_features, self_features], dim=1)
        rep_features = self.mlp(agg_features)
        if f_y is not None and self.transform_type != "nonlinear_kernelonly":
            rep_features = rep_features * in_features
        if weights is not None:
            rep_features = weights[neighbors["neighbors_index"]] * rep_features
            reduction = "sum"
        else:
            reduction = "mean"
        out_features = segment_csr(rep_features, neighbors["neighbors_row_splits"], reduce=reduction)
        return out_features


def main():
    y = torch.rand(6, 2)
    f_y = torch.randn(6, 3)
    neighbors = {
        "neighbors_index": torch.tensor([0, 1, 1, 2, 3, 2, 4, 5, 4, 5]),
        "neighbors_row_splits": torch.tensor([0, 2, 4, 5, 7, 8, 10]),
    }
    gno = IntegralTransform(mlp_layers=[4, 16, 3])
    out = gno(y, neighbors, f_y=f_y)
    loss = out.pow(2).mean()
    loss.backward()
    grads = [p.grad.norm() if p.grad is not None else torch.zeros(()) for p in gno.parameters()]
    return out.detach(), torch.stack(grads)


out, kernel_grad_norms = main()
