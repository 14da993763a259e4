# label: hazard raises
# why: cat_lin1 (a Linear) saves `out` as its input for the weight gradient, and `out += self.cat_lin1(out)` then overwrites that very tensor in place
# source: https://github.com/pyg-team/pytorch_geometric/commit/82dbbf1d68ffed02e3bee364814dc3a2e87d54fa (PR #3656)
import math

import torch
from torch import nn
from torch.nn import Parameter

torch.manual_seed(0)


class MLP(nn.Module):
    def __init__(self, channels, dropout=0.0, relu_first=True):
        super().__init__()
        self.lins = nn.ModuleList([nn.Linear(a, b) for a, b in zip(channels[:-1], channels[1:])])
        self.dropout = dropout
        self.relu_first = relu_first

    def forward(self, x):
        x = self.lins[0](x)
        for lin in self.lins[1:]:
            x = x.relu()
            x = nn.functional.dropout(x, p=self.dropout, training=self.training)
            x = lin(x)
        return x


class SparseLinear(nn.Module):
    def __init__(self, in_channels, out_channels, bias=True):
        super().__init__()
        self.weight = Parameter(torch.empty(in_channels, out_channels))
        self.bias = Parameter(torch.empty(out_channels)) if bias else None
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            nn.init.uniform_(self.bias, -1 / math.sqrt(in_channels), 1 / math.sqrt(in_channels))

    def message(self, weight_j, edge_weight):
        return weight_j if edge_weight is None else edge_weight.view(-1, 1) * weight_j

    def forward(self, edge_index, num_nodes, edge_weight=None):
        row, col = edge_index
        msg = self.message(self.weight[row], edge_weight)
        out = torch.zeros(num_nodes, self.weight.size(1)).index_add(0, col, msg)
        if self.bias is not None:
            out += self.bias
        return out


class LINKX(nn.Module):
    def __init__(self, num_nodes, in_channels, hidden_channels, out_channels, num_layers, num_edge_layers=1,
                 num_node_layers=1, dropout=0.0):
        super().__init__()
        self.num_nodes = num_nodes
        self.num_edge_layers = num_edge_layers
        self.edge_lin = SparseLinear(num_nodes, hidden_channels)
        if self.num_edge_layers > 1:
            self.edge_norm = nn.BatchNorm1d(hidden_channels)
            self.edge_mlp = MLP([hidden_channels] * num_edge_layers, dropout=0.0)
        self.node_mlp = MLP([in_channels] + [hidden_channels] * num_node_layers, dropout=0.0)
        self.cat_lin1 = nn.Linear(hidden_channels, hidden_channels)
        self.cat_lin2 = nn.Linear(hidden_channels, hidden_channels)
        self.final_mlp = MLP([hidden_channels] * num_layers + [out_channels], dropout)

    def forward(self, x, edge_index, edge_weight=None):
        out = self.edge_lin(edge_index, self.num_nodes, edge_weight)
        if self.num_edge_layers > 1:
            out = out.relu()
            out = self.edge_norm(out)
            out = self.edge_mlp(out)
        out += self.cat_lin1(out)  # <-- IPL001: cat_lin1 saved `out` for backward; += overwrites it
        if x is not None:
            x = self.node_mlp(x)
            out += x
            out += self.cat_lin2(x)
        return self.final_mlp(out.relu_())


num_nodes = 5
edge_index = torch.tensor([[0, 1, 1, 2, 3, 4, 2], [1, 0, 2, 1, 4, 3, 4]])
x = torch.randn(num_nodes, 3)
y = torch.randint(0, 2, (num_nodes,))
model = LINKX(num_nodes, in_channels=3, hidden_channels=6, out_channels=2, num_layers=2)
out = model(x, edge_index)
loss = nn.functional.cross_entropy(out, y)
loss.backward()
