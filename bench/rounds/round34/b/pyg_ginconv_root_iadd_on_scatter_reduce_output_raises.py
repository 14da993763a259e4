# label: hazard raises
# why: on torch >= 1.12 torch_geometric.utils.scatter returned the result of `out.scatter_reduce_(...)` itself; GINConv.forward adds the weighted root features in place onto that aggregation output (`out += (1 + self.eps) * x_r`) before its MLP, so training a GIN graph classifier fails in backward (the same commit's `.clone()` of the scatter_reduce_ result fixes it).
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

    return out.scatter_reduce_(dim, index, src, reduce, include_self=include_self)


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
        x_j = x[0].index_select(self.node_dim, edge_index[j])
        out = self.message(x_j=x_j)
        out = self.aggregate(out, edge_index[i], dim_size=x[1].size(self.node_dim))
        return self.update(out)

    def aggregate(self, inputs: Tensor, index: Tensor, ptr: Optional[Tensor] = None,
                  dim_size: Optional[int] = None) -> Tensor:
        return self.aggr_module(inputs, index, ptr=ptr, dim_size=dim_size, dim=self.node_dim)

    def update(self, inputs: Tensor) -> Tensor:
        return inputs


def reset(nn):
    for module in nn.modules():
        if hasattr(module, 'reset_parameters') and module is not nn:
            module.reset_parameters()


class GINConv(MessagePassing):
    def __init__(self, nn, eps: float = 0., train_eps: bool = False, **kwargs):
        kwargs.setdefault('aggr', 'add')
        super().__init__(**kwargs)
        self.nn = nn
        self.initial_eps = eps
        if train_eps:
            self.eps = torch.nn.Parameter(torch.Tensor([eps]))
        else:
            self.register_buffer('eps', torch.Tensor([eps]))
        self.reset_parameters()

    def reset_parameters(self):
        reset(self.nn)
        self.eps.data.fill_(self.initial_eps)

    def forward(self, x, edge_index: Tensor, size=None) -> Tensor:
        """"""
        if isinstance(x, Tensor):
            x = (x, x)

        # propagate_type: (x: OptPairTensor)
        out = self.propagate(edge_index, x=x, size=size)

        x_r = x[1]
        if x_r is not None:
            out += (1 + self.eps) * x_r  # <-- IPL001

        return self.nn(out)

    def message(self, x_j: Tensor) -> Tensor:
        return x_j


def global_add_pool(x: Tensor, batch: Optional[Tensor], size: Optional[int] = None) -> Tensor:
    if batch is None:
        return x.sum(dim=-2, keepdim=x.dim() == 2)
    size = int(batch.max().item() + 1) if size is None else size
    return scatter(x, batch, dim=-2, dim_size=size, reduce='add')


class GIN(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, out_channels, num_layers=2):
        super().__init__()
        self.convs = torch.nn.ModuleList()
        for _ in range(num_layers):
            mlp = torch.nn.Sequential(
                torch.nn.Linear(in_channels, hidden_channels),
                torch.nn.ReLU(),
                torch.nn.Linear(hidden_channels, hidden_channels),
            )
            self.convs.append(GINConv(mlp, train_eps=True))
            in_channels = hidden_channels
        self.lin = torch.nn.Linear(hidden_channels, out_channels)

    def forward(self, x, edge_index, batch):
        for conv in self.convs:
            x = conv(x, edge_index).relu()
        x = global_add_pool(x, batch)
        return self.lin(x)


def main():
    # two small graphs (a path and a triangle with a tail) in one mini-batch
    edge_index = torch.tensor([[0, 1, 1, 2, 2, 3, 4, 5, 5, 6, 6, 4, 6, 7],
                               [1, 0, 2, 1, 3, 2, 5, 4, 6, 5, 4, 6, 7, 6]])
    batch = torch.tensor([0, 0, 0, 0, 1, 1, 1, 1])
    x = torch.randn(8, 4)
    y = torch.tensor([0, 1])
    model = GIN(4, 16, 2)
    out = model(x, edge_index, batch)
    loss = torch.nn.functional.cross_entropy(out, y)
    loss.backward()
    return loss.detach(), model.convs[0].eps.grad.clone(), model.lin.weight.grad.clone()


loss, eps_grad, lin_weight_grad = main()
