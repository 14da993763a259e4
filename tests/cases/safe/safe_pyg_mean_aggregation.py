# label: safe
# why: PyG-style mean aggregation scatters messages into a zero buffer with index_add_, clamps a degree count in place and divides the fresh sum in place; the degree is not modified after division uses it.
import torch
import torch.nn as nn


def scatter_mean(src, index, dim_size):
    out = src.new_zeros(dim_size, src.size(-1))
    out.index_add_(0, index, src)
    count = torch.zeros(dim_size)
    count.index_add_(0, index, torch.ones(index.numel()))
    count.clamp_(min=1)
    out /= count.unsqueeze(-1)
    return out


class SAGEConv(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.lin_l = nn.Linear(in_channels, out_channels)
        self.lin_r = nn.Linear(in_channels, out_channels, bias=False)

    def forward(self, x, edge_index):
        src, dst = edge_index
        msg = x[src]
        aggr = scatter_mean(msg, dst, x.size(0))
        out = self.lin_l(aggr)
        out += self.lin_r(x)
        return out


class GraphSAGE(nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.convs = nn.ModuleList([SAGEConv(a, b) for a, b in zip(dims[:-1], dims[1:])])

    def forward(self, x, edge_index):
        for i, conv in enumerate(self.convs):
            x = conv(x, edge_index)
            if i < len(self.convs) - 1:
                x = x.relu_()
        return x


torch.manual_seed(0)
num_nodes = 6
x = torch.randn(num_nodes, 4)
edge_index = torch.tensor([[0, 1, 2, 3, 4, 5, 0, 2], [1, 2, 3, 4, 5, 0, 3, 5]])
gnn = GraphSAGE([4, 8, 8, 2])
out = gnn(x, edge_index)
loss = torch.nn.functional.cross_entropy(out, torch.tensor([0, 1, 0, 1, 1, 0]))
loss.backward()
