# label: hazard raises
# why: for a batched (3-D) adjacency, dense_to_sparse gathers edge_attr with edge_index and then shifts edge_index[1] in place, but the gather saved those very indices for its backward into the learnable adjacency.
# source: https://github.com/pyg-team/pytorch_geometric/issues/10318
import torch
import torch.nn as nn

torch.manual_seed(0)


def dense_to_sparse(adj, mask=None):
    if adj.dim() < 2 or adj.dim() > 3:
        raise ValueError(f"Dense adjacency matrix 'adj' must be two- or three-dimensional (got {adj.dim()} dimensions)")

    if adj.dim() == 2:
        edge_index = adj.nonzero().t()
        edge_attr = adj[edge_index[0], edge_index[1]]
        return edge_index, edge_attr
    else:
        flatten_adj = adj.view(-1, adj.size(-1))
        edge_index = flatten_adj.nonzero().t()
        edge_attr = flatten_adj[edge_index[0], edge_index[1]]

        offset = torch.arange(start=0, end=adj.size(0) * adj.size(2), step=adj.size(2), device=adj.device)
        offset = offset.repeat_interleave(adj.size(1))

        edge_index[1] += offset[edge_index[0]]  # <-- IPL001: shifts the column indices the gather above saved for backward

        return edge_index, edge_attr


class GCNConv(nn.Module):
    """Minimal weighted GCN propagation (scatter-add of normalized messages)."""

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.lin = nn.Linear(in_channels, out_channels, bias=False)
        self.bias = nn.Parameter(torch.zeros(out_channels))

    def forward(self, x, edge_index, edge_weight):
        x = self.lin(x)
        row, col = edge_index[0], edge_index[1]
        deg = torch.zeros(x.size(0)).scatter_add(0, col, edge_weight) + 1.0
        norm = deg.rsqrt()[row] * edge_weight * deg.rsqrt()[col]
        out = torch.zeros_like(x).index_add(0, col, norm.unsqueeze(-1) * x[row])
        return out + self.bias


class Model(nn.Module):
    def __init__(self, in_channels, init_adj):
        super().__init__()
        self.adjacency = nn.Parameter(init_adj, requires_grad=True)
        self.gc = GCNConv(in_channels, in_channels)
        self.linear = nn.Linear(in_channels, 1)

    def forward(self, x):
        edge_index, edge_weight = dense_to_sparse(self.adjacency)
        out = self.gc(x, edge_index=edge_index, edge_weight=edge_weight)
        out = self.linear(out)
        return out


nb_nodes = 6
in_channels = 2
dummy_adj = torch.rand(1, nb_nodes, nb_nodes, dtype=torch.float32)  # this causes error during backward
model = Model(in_channels, dummy_adj)
x = torch.randn(nb_nodes, in_channels)
target = torch.randn(nb_nodes, 1)
out = model(x)
loss = nn.functional.mse_loss(out, target)
loss.backward()
