# label: hazard raises
# why: ResGatedGraphConv adds the skip connection and bias into the aggregated messages with +=, but with the multiplicative (scatter "prod") aggregation the scatter result itself is saved for backward.
# source: https://github.com/pyg-team/pytorch_geometric/pull/5353
import torch
import torch.nn as nn
from torch import Tensor

torch.manual_seed(0)


def scatter(src, index, dim=0, dim_size=None, reduce='sum'):
    index = index.view(-1, 1).expand_as(src)
    out = src.new_zeros((dim_size, src.size(1)))
    if reduce == 'mul':
        return out.scatter_reduce(dim, index, src, reduce='prod', include_self=False)
    return out.scatter_reduce(dim, index, src, reduce='sum', include_self=False)


class MessagePassing(nn.Module):
    def __init__(self, aggr='add'):
        super().__init__()
        self.aggr = aggr

    def propagate(self, edge_index, size=None, **kwargs):
        j, i = edge_index  # source_to_target flow
        k_i = kwargs['k'][i]
        q_j = kwargs['q'][j]
        v_j = kwargs['v'][j]
        out = self.message(k_i, q_j, v_j)
        return self.aggregate(out, i, dim_size=kwargs['k'].size(0))

    def aggregate(self, inputs, index, dim_size=None):
        return scatter(inputs, index, dim=0, dim_size=dim_size, reduce=self.aggr)


class ResGatedGraphConv(MessagePassing):
    def __init__(self, in_channels, out_channels, act=nn.Sigmoid(), root_weight=True, bias=True, **kwargs):
        kwargs.setdefault('aggr', 'add')
        super().__init__(**kwargs)
        self.act = act
        self.root_weight = root_weight
        self.lin_key = nn.Linear(in_channels, out_channels)
        self.lin_query = nn.Linear(in_channels, out_channels)
        self.lin_value = nn.Linear(in_channels, out_channels)
        if root_weight:
            self.lin_skip = nn.Linear(in_channels, out_channels, bias=False)
        self.bias = nn.Parameter(torch.zeros(out_channels)) if bias else None

    def forward(self, x, edge_index):
        if isinstance(x, Tensor):
            x = (x, x)
        k = self.lin_key(x[1])
        q = self.lin_query(x[0])
        v = self.lin_value(x[0])
        out = self.propagate(edge_index, k=k, q=q, v=v, size=None)
        if self.root_weight:
            out += self.lin_skip(x[1])  # <-- IPL001: adds into the "prod" scatter result saved for backward
        if self.bias is not None:
            out += self.bias  # <-- IPL001: same tensor again
        return out

    def message(self, k_i, q_j, v_j):
        return self.act(k_i + q_j) * v_j


edge_index = torch.tensor([[0, 1, 2, 3, 1, 2], [1, 2, 3, 0, 0, 1]])
x = torch.randn(4, 5)
conv1 = ResGatedGraphConv(5, 6, aggr='mul')
conv2 = ResGatedGraphConv(6, 2)
h = torch.relu(conv1(x, edge_index))
out = conv2(h, edge_index)
loss = out.pow(2).mean()
loss.backward()
