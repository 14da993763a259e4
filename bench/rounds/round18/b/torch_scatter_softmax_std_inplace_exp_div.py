# label: hazard raises
# why: scatter_softmax divides the exp_() result in place although ExpBackward saved it, and scatter_std shrinks count in place after tmp.div_(count) saved it, so a GNN using these aggregations cannot backpropagate
# source: https://github.com/rusty1s/pytorch_scatter/commit/cf8cf0c05b10f89a1f3402a0699d8295e16b6153
from typing import Optional

import torch

torch.manual_seed(0)


def broadcast(src: torch.Tensor, other: torch.Tensor, dim: int):
    if dim < 0:
        dim = other.dim() + dim
    if src.dim() == 1:
        for _ in range(0, dim):
            src = src.unsqueeze(0)
    for _ in range(src.dim(), other.dim()):
        src = src.unsqueeze(-1)
    src = src.expand_as(other)
    return src


def scatter_sum(src: torch.Tensor, index: torch.Tensor, dim: int = -1, out: Optional[torch.Tensor] = None,
                dim_size: Optional[int] = None) -> torch.Tensor:
    index = broadcast(index, src, dim)
    if out is None:
        size = list(src.size())
        size[dim] = dim_size if dim_size is not None else int(index.max()) + 1
        out = torch.zeros(size, dtype=src.dtype, device=src.device)
    return out.scatter_add(dim, index, src)


def scatter_max(src, index, dim=-1, dim_size=None):
    index = broadcast(index, src, dim)
    size = list(src.size())
    size[dim] = dim_size if dim_size is not None else int(index.max()) + 1
    return torch.full(size, float('-inf')).scatter_reduce(dim, index, src, reduce='amax', include_self=True)


def scatter_softmax(src: torch.Tensor, index: torch.Tensor, dim: int = -1, eps: float = 1e-12) -> torch.Tensor:
    if not torch.is_floating_point(src):
        raise ValueError('`scatter_softmax` can only be computed over tensors with floating point data types.')
    index = broadcast(index, src, dim)
    max_value_per_index = scatter_max(src, index, dim=dim)
    max_per_src_element = max_value_per_index.gather(dim, index)
    recentered_scores = src - max_per_src_element
    recentered_scores_exp = recentered_scores.exp_()
    sum_per_index = scatter_sum(recentered_scores_exp, index, dim)
    normalizing_constants = sum_per_index.add_(eps).gather(dim, index)
    return recentered_scores_exp.div_(normalizing_constants)  # <-- IPL001: exp_() output was saved by ExpBackward


def scatter_std(src: torch.Tensor, index: torch.Tensor, dim: int = -1, out: Optional[torch.Tensor] = None,
                dim_size: Optional[int] = None, unbiased: bool = True) -> torch.Tensor:
    if out is not None:
        dim_size = out.size(dim)
    if dim < 0:
        dim = src.dim() + dim
    count_dim = dim
    if index.dim() <= dim:
        count_dim = index.dim() - 1
    ones = torch.ones(index.size(), dtype=src.dtype, device=src.device)
    count = scatter_sum(ones, index, count_dim, dim_size=dim_size)

    index = broadcast(index, src, dim)
    tmp = scatter_sum(src, index, dim, dim_size=dim_size)
    count = broadcast(count, tmp, dim).clamp(1)
    mean = tmp.div_(count)

    var = (src - mean.gather(dim, index))
    var = var * var
    out = scatter_sum(var, index, dim, out, dim_size)

    if unbiased:
        count.sub_(1).clamp_(1)  # <-- IPL001: count was saved by tmp.div_(count) for backward
    out.div_(count).sqrt_()
    return out


class AttentionStdPool(torch.nn.Module):
    """Edge-attention message passing followed by a mean/std graph readout."""

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.lin = torch.nn.Linear(in_channels, out_channels)
        self.att = torch.nn.Linear(2 * out_channels, 1)
        self.out = torch.nn.Linear(2 * out_channels, 1)

    def forward(self, x, edge_index, batch):
        h = self.lin(x)
        src, dst = edge_index
        alpha = self.att(torch.cat([h[src], h[dst]], dim=-1)).squeeze(-1)
        alpha = scatter_softmax(torch.nn.functional.leaky_relu(alpha, 0.2), dst, dim=0)
        h = scatter_sum(alpha.unsqueeze(-1) * h[src], dst, dim=0, dim_size=x.size(0))
        mean = scatter_sum(h, batch, dim=0) / scatter_sum(torch.ones_like(batch, dtype=h.dtype), batch, dim=0).unsqueeze(-1)
        std = scatter_std(h, batch, dim=0)
        return self.out(torch.cat([mean, std], dim=-1)).squeeze(-1)


x = torch.randn(7, 4)
edge_index = torch.tensor([[0, 1, 2, 1, 3, 4, 5, 6, 5, 4], [1, 0, 1, 2, 4, 3, 4, 5, 6, 6]])
batch = torch.tensor([0, 0, 0, 1, 1, 1, 1])
model = AttentionStdPool(4, 8)
pred = model(x, edge_index, batch)
loss = torch.nn.functional.mse_loss(pred, torch.tensor([0.5, -0.5]))
loss.backward()
