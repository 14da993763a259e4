# label: hazard raises
# why: the same docs GCNConv run with max aggregation: scatter_reduce(amax) saves its result to route gradients, and `out += self.bias` rewrites that result
# source: https://github.com/pyg-team/pytorch_geometric/issues/8953 (docs/source/notes/create_gnn.rst, GCNConv example)
import torch
from torch.nn import Linear, Parameter

torch.manual_seed(0)


def add_self_loops(edge_index, num_nodes):
    loop = torch.arange(num_nodes).unsqueeze(0).repeat(2, 1)
    return torch.cat([edge_index, loop], dim=1), None


def degree(index, num_nodes, dtype):
    out = torch.zeros((num_nodes, ), dtype=dtype)
    one = torch.ones((index.size(0), ), dtype=dtype)
    return out.scatter_add_(0, index, one)


def scatter(src, index, dim_size, reduce):
    size = (dim_size, ) + tuple(src.shape[1:])
    if reduce == 'sum':
        return src.new_zeros(size).index_add_(0, index, src)
    index = index.view(-1, *([1] * (src.dim() - 1))).expand_as(src)
    return src.new_zeros(size).scatter_reduce_(0, index, src, reduce='amax', include_self=False)


class MessagePassing(torch.nn.Module):
    def __init__(self, aggr='sum'):
        super().__init__()
        self.aggr = aggr

    def propagate(self, edge_index, x, **kwargs):
        j, i = edge_index
        msg = self.message(x[j], **kwargs)
        return scatter(msg, i, dim_size=x.size(0), reduce=self.aggr)


class GCNConv(MessagePassing):
    def __init__(self, in_channels, out_channels, aggr='sum'):
        super().__init__(aggr=aggr)  # "Add" aggregation (Step 5).
        self.lin = Linear(in_channels, out_channels, bias=False)
        self.bias = Parameter(torch.zeros(out_channels))
        self.reset_parameters()

    def reset_parameters(self):
        self.lin.reset_parameters()

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
        out += self.bias  # <-- IPL001: `out` is the amax scatter result saved for backward

        return out

    def message(self, x_j, norm):
        # Step 4: Normalize node features.
        return norm.view(-1, 1) * x_j


conv1 = GCNConv(4, 8, aggr='max')
conv2 = GCNConv(8, 2, aggr='max')
x = torch.randn(5, 4)
edge_index = torch.tensor([[0, 1, 1, 2, 3, 4], [1, 0, 2, 1, 4, 3]])
h = conv1(x, edge_index).relu()
out = conv2(h, edge_index)
loss = torch.nn.functional.cross_entropy(out, torch.tensor([0, 1, 0, 1, 1]))
loss.backward()
