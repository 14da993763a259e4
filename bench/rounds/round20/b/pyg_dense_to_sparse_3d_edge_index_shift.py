# label: hazard raises
# why: for a batched (3-D) adjacency `edge_attr = flatten_adj[edge_index[0], edge_index[1]]` saves the index rows for backward, and the following `edge_index[1] += offset[...]` shifts them in place, so backpropagating through edge_attr fails.
# source: https://github.com/pyg-team/pytorch_geometric/pull/10758 (commit ac3a8e728990c1325e114d6d4cb65128acd6765e)
from typing import Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor

torch.manual_seed(0)


def cumsum(x: Tensor, dim: int = 0) -> Tensor:
    size = x.size()[:dim] + (x.size(dim) + 1,) + x.size()[dim + 1:]
    out = x.new_empty(size)
    out.narrow(dim, 0, 1).zero_()
    torch.cumsum(x, dim=dim, out=out.narrow(dim, 1, x.size(dim)))
    return out


def dense_to_sparse(adj: Tensor, mask: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
    if adj.dim() < 2 or adj.dim() > 3:
        raise ValueError(f"Dense adjacency matrix 'adj' must be two- or "
                         f"three-dimensional (got {adj.dim()} dimensions)")

    if adj.dim() == 2:
        edge_index = adj.nonzero().t()
        edge_attr = adj[edge_index[0], edge_index[1]]
        return edge_index, edge_attr
    else:
        flatten_adj = adj.view(-1, adj.size(-1))
        if mask is not None:
            flatten_adj = flatten_adj[mask.view(-1)]
        edge_index = flatten_adj.nonzero().t()
        edge_attr = flatten_adj[edge_index[0], edge_index[1]]

        if mask is None:
            offset = torch.arange(
                start=0,
                end=adj.size(0) * adj.size(2),
                step=adj.size(2),
                device=adj.device,
            )
            offset = offset.repeat_interleave(adj.size(1))
        else:
            count = mask.sum(dim=-1)
            offset = cumsum(count)[:-1]
            offset = offset.repeat_interleave(count)

        edge_index[1] += offset[edge_index[0]]  # <-- IPL001

        return edge_index, edge_attr


def gcn_propagate(x, edge_index, edge_weight, num_nodes):
    row, col = edge_index
    deg = torch.zeros(num_nodes).index_add(0, col, edge_weight)
    deg_inv = deg.clamp(min=1e-6).reciprocal()
    msg = x[row] * (edge_weight * deg_inv[col]).unsqueeze(-1)
    return torch.zeros_like(x).index_add(0, col, msg)


def main():
    batch_size, num_nodes, feat = 2, 4, 5
    x = torch.randn(batch_size, num_nodes, feat)
    s_logits = torch.randn(batch_size, num_nodes, num_nodes, requires_grad=True)
    # learned (soft) adjacency, e.g. the output of a pooling / structure-learning layer
    adj = torch.sigmoid(s_logits) * (torch.rand(batch_size, num_nodes, num_nodes) > 0.4)
    mask = torch.tensor([[True, True, True, False], [True, True, True, True]])

    edge_index, edge_weight = dense_to_sparse(adj, mask)
    x_flat = x[mask]
    out = gcn_propagate(x_flat, edge_index, edge_weight, x_flat.size(0))
    loss = out.pow(2).mean()
    loss.backward()
    return loss.detach(), s_logits.grad


loss, s_grad = main()
