# label: hazard raises
# why: dense_to_sparse gathers edge_attr with flatten_adj[edge_index[0], edge_index[1]], which saves edge_index for backward, and then shifts the column indices in place with edge_index[1] += offset
# source: https://github.com/pyg-team/pytorch_geometric/commit/ac3a8e728990c1325e114d6d4cb65128acd6765e
from typing import Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor

torch.manual_seed(0)


def dense_to_sparse(adj: Tensor, mask: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
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
            offset = torch.cat([count.new_zeros(1), count.cumsum(0)])[:-1]
            offset = offset.repeat_interleave(count)

        edge_index[1] += offset[edge_index[0]]  # <-- IPL001: edge_index was saved by the advanced indexing that produced edge_attr

        return edge_index, edge_attr


class DenseToSparsePool(torch.nn.Module):
    """Learned soft adjacency per graph (as after a DiffPool layer), then sparse message passing."""

    def __init__(self, channels=4):
        super().__init__()
        self.score = torch.nn.Linear(channels, channels)
        self.lin = torch.nn.Linear(channels, channels)

    def forward(self, x, mask):
        # x: [batch, nodes, channels]
        adj = torch.sigmoid(self.score(x) @ x.transpose(1, 2))
        adj = adj * (adj > 0.5)
        edge_index, edge_weight = dense_to_sparse(adj, mask)
        flat_x = x[mask]
        src, dst = edge_index
        out = torch.zeros_like(flat_x).index_add(0, dst, edge_weight.unsqueeze(-1) * self.lin(flat_x)[src])
        return F.relu(out)


x = torch.randn(2, 3, 4)
mask = torch.tensor([[True, True, False], [True, True, True]])
model = DenseToSparsePool()
out = model(x, mask)
loss = out.sum()
loss.backward()
