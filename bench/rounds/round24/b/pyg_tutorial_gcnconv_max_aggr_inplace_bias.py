# label: hazard raises
# why: with aggr='max' the scatter(reduce='max') aggregation saves its output for backward (to route gradients to the arg-max messages), and the tutorial's `out += self.bias` then overwrites that saved aggregation in place.
# source: https://github.com/pyg-team/pytorch_geometric/issues/8953 (fixed by https://github.com/pyg-team/pytorch_geometric/pull/8958, commit f0e0d32d084b2deb7187cc0501dae4da9fb08813)
import torch
import torch.nn as nn
from torch.nn import Linear, Parameter

torch.manual_seed(0)


def add_self_loops(edge_index, num_nodes):
    loop_index = torch.arange(num_nodes).unsqueeze(0).repeat(2, 1)
    return torch.cat([edge_index, loop_index], dim=1), None


def degree(index, num_nodes, dtype):
    out = torch.zeros((num_nodes,), dtype=dtype)
    one = torch.ones((index.size(0),), dtype=dtype)
    return out.scatter_add_(0, index, one)


def scatter(src, index, dim, dim_size, reduce='sum'):
    size = list(src.size())
    size[dim] = dim_size
    index = index.view(-1, 1).expand_as(src)
    if reduce == 'sum':
        return src.new_zeros(size).scatter_add_(dim, index, src)
    # torch_geometric.utils.scatter: max/min go through scatter_reduce
    return src.new_zeros(size).scatter_reduce_(dim, index, src, reduce='a' + reduce, include_self=False)


class MessagePassing(nn.Module):
    def __init__(self, aggr='add'):
        super().__init__()
        self.aggr = aggr

    def propagate(self, edge_index, x, norm):
        row, col = edge_index
        x_j = x.index_select(0, row)
        msg = self.message(x_j, norm)
        reduce = {'add': 'sum', 'max': 'max'}[self.aggr]
        return scatter(msg, col, dim=0, dim_size=x.size(0), reduce=reduce)


class GCNConv(MessagePassing):
    def __init__(self, in_channels, out_channels, aggr='add'):
        super().__init__(aggr=aggr)
        self.lin = Linear(in_channels, out_channels, bias=False)
        self.bias = Parameter(torch.zeros(out_channels))

    def forward(self, x, edge_index):
        # Step 1: Add self-loops to the adjacency matrix.
        edge_index, _ = add_self_loops(edge_index, num_nodes=x.size(0))
        # Step 2: Linearly transform node feature matrix.
        x = self.lin(x)
        # Step 3: Compute normalization.
        row, col = edge_index
        deg = degree(col, x.size(0), dtype=x.dtype)
        deg_inv_sqrt = deg.pow(-0.5)
        deg_inv_sqrt[deg_inv_sqrt == float('inf')] = 0
        norm = deg_inv_sqrt[row] * deg_inv_sqrt[col]
        # Step 4-5: Start propagating messages.
        out = self.propagate(edge_index, x=x, norm=norm)
        # Step 6: Apply a final bias vector.
        out += self.bias  # <-- IPL001
        return out

    def message(self, x_j, norm):
        return norm.view(-1, 1) * x_j


def main():
    x = torch.randn(6, 8)
    edge_index = torch.tensor([[0, 1, 1, 2, 3, 4, 5, 2],
                               [1, 0, 2, 1, 4, 3, 2, 5]])
    conv = GCNConv(8, 4, aggr='max')
    out = conv(x, edge_index)
    loss = out.relu().sum()
    loss.backward()
    return conv.lin.weight.grad


result = main()
