# label: hazard raises
# why: FiLMConv applies its ReLU activation to the skip branch and then adds the propagated messages with out += ..., overwriting the ReLU output that ReLU saved for backward
# source: https://github.com/pyg-team/pytorch_geometric/commit/176e61d8b212aee4d4172200ee4dd97fddfc361b
import torch
from torch import Tensor
from torch.nn import Linear, ModuleList, ReLU

torch.manual_seed(0)


class MessagePassing(torch.nn.Module):
    """Minimal mean-aggregation stand-in for torch_geometric.nn.MessagePassing."""

    def __init__(self, aggr='mean'):
        super().__init__()
        self.aggr = aggr

    def propagate(self, edge_index, x, beta, gamma, size=None):
        src, dst = edge_index
        msg = self.message(x[src], beta[dst], gamma[dst])
        out = torch.zeros(beta.size(0), msg.size(-1)).index_add(0, dst, msg)
        count = torch.zeros(beta.size(0)).index_add(0, dst, torch.ones(dst.numel())).clamp(min=1)
        return out / count.unsqueeze(-1)


class FiLMConv(MessagePassing):
    def __init__(self, in_channels, out_channels, num_relations=1, act=ReLU(), aggr='mean'):
        super().__init__(aggr=aggr)
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.num_relations = max(num_relations, 1)
        self.act = act
        in_channels = (in_channels, in_channels)
        self.lins = ModuleList()
        self.films = ModuleList()
        for _ in range(num_relations):
            self.lins.append(Linear(in_channels[0], out_channels, bias=False))
            self.films.append(Linear(in_channels[1], 2 * out_channels))
        self.lin_skip = Linear(in_channels[1], self.out_channels, bias=False)
        self.film_skip = Linear(in_channels[1], 2 * self.out_channels, bias=False)

    def forward(self, x, edge_index, edge_type=None) -> Tensor:
        if isinstance(x, Tensor):
            x = (x, x)

        beta, gamma = self.film_skip(x[1]).split(self.out_channels, dim=-1)
        out = gamma * self.lin_skip(x[1]) + beta
        if self.act is not None:
            out = self.act(out)

        if self.num_relations <= 1:
            beta, gamma = self.films[0](x[1]).split(self.out_channels, dim=-1)
            out += self.propagate(edge_index, x=self.lins[0](x[0]), beta=beta,  # <-- IPL001: out is the ReLU output, saved by ReluBackward
                                  gamma=gamma, size=None)
        else:
            for i, (lin, film) in enumerate(zip(self.lins, self.films)):
                beta, gamma = film(x[1]).split(self.out_channels, dim=-1)
                mask = edge_type == i
                out += self.propagate(edge_index[:, mask], x=lin(x[0]),  # <-- IPL001: out is the ReLU output, saved by ReluBackward
                                      beta=beta, gamma=gamma, size=None)
        return out

    def message(self, x_j, beta_i, gamma_i):
        out = gamma_i * x_j + beta_i
        if self.act is not None:
            out = self.act(out)
        return out


x = torch.randn(6, 4)
edge_index = torch.tensor([[0, 1, 2, 3, 4, 5, 1, 3], [1, 0, 3, 2, 5, 4, 2, 5]])
edge_type = torch.tensor([0, 1, 0, 1, 0, 1, 0, 1])
conv = FiLMConv(4, 8, num_relations=2)
out = conv(x, edge_index, edge_type)
loss = out.pow(2).mean()
loss.backward()
