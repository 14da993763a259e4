# label: hazard raises
# why: out is the ReLU-activated skip branch (ReLU saves its output for backward) and the propagated messages are then added into it with +=
# source: https://github.com/pyg-team/pytorch_geometric/issues/3621
import torch
import torch.nn as nn
from torch import Tensor
from torch.nn import Linear, ReLU

torch.manual_seed(0)


class FiLMConv(nn.Module):
    def __init__(self, in_channels, out_channels, num_relations=2, act=ReLU()):
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.num_relations = max(num_relations, 1)
        self.act = act
        self.lins = nn.ModuleList([Linear(in_channels, out_channels, bias=False) for _ in range(self.num_relations)])
        self.films = nn.ModuleList([Linear(in_channels, 2 * out_channels) for _ in range(self.num_relations)])
        self.lin_skip = Linear(in_channels, out_channels, bias=False)
        self.film_skip = Linear(in_channels, 2 * out_channels, bias=False)

    def message(self, x_j, beta_i, gamma_i):
        out = gamma_i * x_j + beta_i
        if self.act is not None:
            out = self.act(out)
        return out

    def propagate(self, edge_index, x, beta, gamma, size=None):
        src, dst = edge_index
        msg = self.message(x[src], beta[dst], gamma[dst])
        out = torch.zeros(x.size(0), msg.size(1)).index_add(0, dst, msg)
        count = torch.zeros(x.size(0)).index_add(0, dst, torch.ones(dst.numel())).clamp(min=1)
        return out / count[:, None]

    def forward(self, x, edge_index, edge_type=None):
        if isinstance(x, Tensor):
            x = (x, x)
        beta, gamma = self.film_skip(x[1]).split(self.out_channels, dim=-1)
        out = gamma * self.lin_skip(x[1]) + beta
        if self.act is not None:
            out = self.act(out)

        if self.num_relations <= 1:
            beta, gamma = self.films[0](x[1]).split(self.out_channels, dim=-1)
            out += self.propagate(edge_index, x=self.lins[0](x[0]), beta=beta, gamma=gamma, size=None)  # <-- IPL001: out is the ReLU output saved for backward
        else:
            for i, (lin, film) in enumerate(zip(self.lins, self.films)):
                beta, gamma = film(x[1]).split(self.out_channels, dim=-1)
                mask = edge_type == i
                out += self.propagate(edge_index[:, mask], x=lin(x[0]), beta=beta, gamma=gamma, size=None)  # <-- IPL001: out is the ReLU output saved for backward
        return out


class Net(nn.Module):
    def __init__(self, in_channels, hidden_channels, out_channels):
        super().__init__()
        self.conv1 = FiLMConv(in_channels, hidden_channels)
        self.conv2 = FiLMConv(hidden_channels, out_channels, act=None)

    def forward(self, x, edge_index, edge_type):
        x = self.conv1(x, edge_index, edge_type)
        return self.conv2(x, edge_index, edge_type)


model = Net(5, 8, 3)
x = torch.randn(6, 5)
edge_index = torch.tensor([[0, 1, 2, 3, 4, 5, 0, 2], [1, 2, 3, 4, 5, 0, 3, 5]])
edge_type = torch.tensor([0, 1, 0, 1, 0, 1, 0, 1])
y = torch.randint(0, 2, (6, 3)).float()
out = model(x, edge_index, edge_type)
loss = torch.nn.functional.binary_cross_entropy_with_logits(out, y)
loss.backward()
