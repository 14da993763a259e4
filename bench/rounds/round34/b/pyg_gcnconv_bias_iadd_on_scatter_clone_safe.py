# label: safe
# why: the commit's torch >= 1.12 scatter returns `out.scatter_reduce_(...).clone()`, so GCNConv's in-place `out += self.bias` (and gcn_norm's `deg.pow_` / `masked_fill_` on the degree vector) act on a tensor no backward node depends on.
# source: https://github.com/pyg-team/pytorch_geometric/commit/8e71d83a4408b4d86e9d574c2731fc3a24adc74c
from typing import Optional

import torch
from torch import Tensor
from torch.nn import Parameter

torch.manual_seed(0)


def scatter(src: Tensor, index: Tensor, dim: int = -1, out: Optional[Tensor] = None,
            dim_size: Optional[int] = None, reduce: str = 'sum') -> Tensor:

    reduce = 'sum' if reduce == 'add' else reduce
    reduce = 'prod' if reduce == 'mul' else reduce
    reduce = 'amin' if reduce == 'min' else reduce
    reduce = 'amax' if reduce == 'max' else reduce

    # Broadcast `index`:
    dim = src.dim() + dim if dim < 0 else dim
    if index.dim() == 1:
        for _ in range(0, dim):
            index = index.unsqueeze(0)
    for _ in range(index.dim(), src.dim()):
        index = index.unsqueeze(-1)
    index = index.expand(src.size())

    include_self = out is not None

    if out is None:  # Generate `out` if not given:
        size = list(src.size())
        if dim_size is not None:
            size[dim] = dim_size
        elif index.numel() > 0:
            size[dim] = int(index.max()) + 1
        else:
            size[dim] = 0
        out = src.new_zeros(size)

    return out.scatter_reduce_(dim, index, src, reduce,
                               include_self=include_self).clone()


class Aggregation(torch.nn.Module):
    def reduce(self, x: Tensor, index: Optional[Tensor] = None, ptr: Optional[Tensor] = None,
               dim_size: Optional[int] = None, dim: int = -2, reduce: str = 'add') -> Tensor:
        assert index is not None
        return scatter(x, index, dim=dim, dim_size=dim_size, reduce=reduce)


class SumAggregation(Aggregation):
    def forward(self, x: Tensor, index: Optional[Tensor] = None, ptr: Optional[Tensor] = None,
                dim_size: Optional[int] = None, dim: int = -2) -> Tensor:
        return self.reduce(x, index, ptr, dim_size, dim, reduce='sum')


class MessagePassing(torch.nn.Module):
    def __init__(self, aggr: str = 'add', flow: str = 'source_to_target', node_dim: int = -2):
        super().__init__()
        self.aggr = aggr
        self.aggr_module = SumAggregation()
        self.flow = flow
        self.node_dim = node_dim

    def propagate(self, edge_index: Tensor, size=None, **kwargs):
        j, i = (0, 1) if self.flow == 'source_to_target' else (1, 0)
        x = kwargs['x']
        x_j = x.index_select(self.node_dim, edge_index[j])
        out = self.message(x_j=x_j, edge_weight=kwargs.get('edge_weight'))
        out = self.aggregate(out, edge_index[i], dim_size=x.size(self.node_dim))
        return self.update(out)

    def aggregate(self, inputs: Tensor, index: Tensor, ptr: Optional[Tensor] = None,
                  dim_size: Optional[int] = None) -> Tensor:
        return self.aggr_module(inputs, index, ptr=ptr, dim_size=dim_size, dim=self.node_dim)

    def update(self, inputs: Tensor) -> Tensor:
        return inputs


def add_remaining_self_loops(edge_index, edge_weight, fill_value, num_nodes):
    mask = edge_index[0] != edge_index[1]
    loop_index = torch.arange(0, num_nodes, dtype=torch.long, device=edge_index.device)
    loop_index = loop_index.unsqueeze(0).repeat(2, 1)
    loop_weight = edge_weight.new_full((num_nodes, ), fill_value)
    edge_index = torch.cat([edge_index[:, mask], loop_index], dim=1)
    edge_weight = torch.cat([edge_weight[mask], loop_weight], dim=0)
    return edge_index, edge_weight


def gcn_norm(edge_index, edge_weight=None, num_nodes=None, improved=False,
             add_self_loops=True, flow="source_to_target", dtype=None):

    fill_value = 2. if improved else 1.

    if edge_weight is None:
        edge_weight = torch.ones((edge_index.size(1), ), dtype=dtype, device=edge_index.device)

    if add_self_loops:
        edge_index, tmp_edge_weight = add_remaining_self_loops(edge_index, edge_weight, fill_value, num_nodes)
        assert tmp_edge_weight is not None
        edge_weight = tmp_edge_weight

    row, col = edge_index[0], edge_index[1]
    idx = col if flow == "source_to_target" else row
    deg = scatter(edge_weight, idx, dim=0, dim_size=num_nodes, reduce='sum')
    deg_inv_sqrt = deg.pow_(-0.5)
    deg_inv_sqrt.masked_fill_(deg_inv_sqrt == float('inf'), 0)
    return edge_index, deg_inv_sqrt[row] * edge_weight * deg_inv_sqrt[col]


class GCNConv(MessagePassing):
    def __init__(self, in_channels: int, out_channels: int, improved: bool = False, cached: bool = False,
                 add_self_loops: bool = True, normalize: bool = True, bias: bool = True):
        super().__init__(aggr='add')
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.improved = improved
        self.cached = cached
        self.add_self_loops = add_self_loops
        self.normalize = normalize
        self._cached_edge_index = None
        self.lin = torch.nn.Linear(in_channels, out_channels, bias=False)
        if bias:
            self.bias = Parameter(0.1 * torch.randn(out_channels))
        else:
            self.register_parameter('bias', None)

    def forward(self, x: Tensor, edge_index: Tensor, edge_weight: Optional[Tensor] = None) -> Tensor:
        if self.normalize:
            cache = self._cached_edge_index
            if cache is None:
                edge_index, edge_weight = gcn_norm(  # yapf: disable
                    edge_index, edge_weight, x.size(self.node_dim),
                    self.improved, self.add_self_loops, self.flow)
                if self.cached:
                    self._cached_edge_index = (edge_index, edge_weight)
            else:
                edge_index, edge_weight = cache[0], cache[1]

        x = self.lin(x)

        # propagate_type: (x: Tensor, edge_weight: OptTensor)
        out = self.propagate(edge_index, x=x, edge_weight=edge_weight, size=None)

        if self.bias is not None:
            out += self.bias

        return out

    def message(self, x_j: Tensor, edge_weight: Optional[Tensor]) -> Tensor:
        return x_j if edge_weight is None else edge_weight.view(-1, 1) * x_j


class GCN(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, out_channels):
        super().__init__()
        self.conv1 = GCNConv(in_channels, hidden_channels, cached=True)
        self.conv2 = GCNConv(hidden_channels, out_channels, cached=True)

    def forward(self, x, edge_index, edge_weight=None):
        x = torch.nn.functional.dropout(x, p=0.5, training=self.training)
        x = self.conv1(x, edge_index, edge_weight).relu()
        x = torch.nn.functional.dropout(x, p=0.5, training=self.training)
        x = self.conv2(x, edge_index, edge_weight)
        return x


def main():
    num_nodes = 8
    edge_index = torch.tensor([[0, 1, 1, 2, 2, 3, 4, 5, 5, 6, 6, 7, 3, 4],
                               [1, 0, 2, 1, 3, 2, 5, 4, 6, 5, 7, 6, 4, 3]])
    x = torch.randn(num_nodes, 5)
    y = torch.randint(0, 3, (num_nodes, ))
    train_mask = torch.tensor([True, True, False, True, False, True, True, False])
    model = GCN(5, 16, 3)
    model.train()
    out = model(x, edge_index)
    loss = torch.nn.functional.cross_entropy(out[train_mask], y[train_mask])
    loss.backward()
    return loss.detach(), model.conv1.lin.weight.grad.clone(), model.conv2.bias.grad.clone()


loss, conv1_weight_grad, conv2_bias_grad = main()
