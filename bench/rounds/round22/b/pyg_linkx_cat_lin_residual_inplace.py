# label: hazard raises
# why: LINKX.forward does out += self.cat_lin1(out), adding in place into the tensor that cat_lin1 (a Linear) just saved as its input for the weight gradient, so training LINKX fails in backward with the [num_nodes, hidden] tensor at version 1.
# source: https://github.com/pyg-team/pytorch_geometric/commit/d9031256e0c5235225e732b8b2a40b8ccdd91e01 (torch_geometric/nn/models/linkx.py: out += self.cat_lin1(out) -> out = out + self.cat_lin1(out))
import math

import torch
import torch.nn.functional as F
from torch import Tensor
from torch.nn import Parameter

torch.manual_seed(0)


class SparseLinear(torch.nn.Module):
    def __init__(self, in_channels: int, out_channels: int, bias: bool = True):
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.weight = Parameter(torch.empty(in_channels, out_channels))
        self.bias = Parameter(torch.empty(out_channels)) if bias else None
        self.reset_parameters()

    def reset_parameters(self):
        torch.nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        bound = 1.0 / math.sqrt(self.in_channels)
        torch.nn.init.uniform_(self.bias, -bound, bound)

    def forward(self, edge_index: Tensor, edge_weight=None) -> Tensor:
        # propagate(edge_index, weight=self.weight): message weight_j, aggr='add'
        weight_j = self.weight[edge_index[0]]
        msg = weight_j if edge_weight is None else edge_weight.view(-1, 1) * weight_j
        out = msg.new_zeros(self.in_channels, self.out_channels).index_add_(0, edge_index[1], msg)
        if self.bias is not None:
            out += self.bias
        return out


class MLP(torch.nn.Module):
    def __init__(self, channel_list, dropout=0.0, relu_first=False):
        super().__init__()
        self.dropout = dropout
        self.relu_first = relu_first
        self.lins = torch.nn.ModuleList(torch.nn.Linear(a, b) for a, b in zip(channel_list[:-1], channel_list[1:]))

    def forward(self, x: Tensor) -> Tensor:
        x = self.lins[0](x)
        for lin in self.lins[1:]:
            x = x.relu_()
            x = F.dropout(x, p=self.dropout, training=self.training)
            x = lin(x)
        return x


class LINKX(torch.nn.Module):
    def __init__(self, num_nodes, in_channels, hidden_channels, out_channels, num_layers, num_node_layers=1, dropout=0.0):
        super().__init__()
        self.num_nodes = num_nodes
        self.edge_lin = SparseLinear(num_nodes, hidden_channels)
        channels = [in_channels] + [hidden_channels] * num_node_layers
        self.node_mlp = MLP(channels, dropout=0.0, relu_first=True)
        self.cat_lin1 = torch.nn.Linear(hidden_channels, hidden_channels)
        self.cat_lin2 = torch.nn.Linear(hidden_channels, hidden_channels)
        channels = [hidden_channels] * num_layers + [out_channels]
        self.final_mlp = MLP(channels, dropout, relu_first=True)

    def forward(self, x, edge_index, edge_weight=None):
        out = self.edge_lin(edge_index, edge_weight)

        out += self.cat_lin1(out)  # <-- IPL001

        if x is not None:
            x = self.node_mlp(x)
            out += x
            out += self.cat_lin2(x)

        return self.final_mlp(out.relu_())


def main():
    num_nodes = 10
    x = torch.randn(num_nodes, 5)
    src = torch.randint(0, num_nodes, (30,))
    dst = torch.randint(0, num_nodes, (30,))
    edge_index = torch.stack([torch.cat([src, dst]), torch.cat([dst, src])])
    y = torch.randint(0, 3, (num_nodes,))
    model = LINKX(num_nodes, 5, 16, 3, num_layers=2)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    model.train()
    optimizer.zero_grad()
    out = model(x, edge_index)
    loss = F.cross_entropy(out, y)
    loss.backward()
    optimizer.step()
    return out, loss


out, loss = main()
