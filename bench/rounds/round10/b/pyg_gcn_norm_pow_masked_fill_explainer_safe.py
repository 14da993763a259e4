# label: safe
# why: gcn_norm raises the freshly scattered degree to -0.5 with pow_ and masks infinities in place, and GCNConv adds the bias into the propagate output with +=; none of these tensors is saved by an earlier op, so gradients w.r.t. a learned edge mask stay correct.
# source: https://github.com/pyg-team/pytorch_geometric/blob/a1c131f9e30116c419fd858f735b8cca9159ca9f/torch_geometric/nn/conv/gcn_conv.py
import torch
import torch.nn as nn
from torch.nn import Parameter

torch.manual_seed(0)


def scatter_add(src, index, dim=0, dim_size=None):
    out = torch.zeros((dim_size,) + src.shape[1:], dtype=src.dtype)
    return out.index_add(dim, index, src)


def add_remaining_self_loops(edge_index, edge_weight, fill_value, num_nodes):
    mask = edge_index[0] != edge_index[1]
    loop_index = torch.arange(num_nodes).unsqueeze(0).repeat(2, 1)
    loop_weight = torch.full((num_nodes,), fill_value, dtype=edge_weight.dtype)
    edge_index = torch.cat([edge_index[:, mask], loop_index], dim=1)
    edge_weight = torch.cat([edge_weight[mask], loop_weight], dim=0)
    return edge_index, edge_weight


def gcn_norm(edge_index, edge_weight=None, num_nodes=None, improved=False, add_self_loops=True):
    fill_value = 2. if improved else 1.
    if edge_weight is None:
        edge_weight = torch.ones((edge_index.size(1),))
    if add_self_loops:
        edge_index, tmp_edge_weight = add_remaining_self_loops(edge_index, edge_weight, fill_value, num_nodes)
        edge_weight = tmp_edge_weight
    row, col = edge_index[0], edge_index[1]
    deg = scatter_add(edge_weight, col, dim=0, dim_size=num_nodes)
    deg_inv_sqrt = deg.pow_(-0.5)
    deg_inv_sqrt.masked_fill_(deg_inv_sqrt == float('inf'), 0)
    return edge_index, deg_inv_sqrt[row] * edge_weight * deg_inv_sqrt[col]


class GCNConv(nn.Module):
    def __init__(self, in_channels, out_channels, bias=True):
        super().__init__()
        self.lin = nn.Linear(in_channels, out_channels, bias=False)
        self.bias = Parameter(torch.zeros(out_channels)) if bias else None

    def propagate(self, edge_index, x, edge_weight):
        x_j = x[edge_index[0]]
        msg = self.message(x_j, edge_weight)
        return scatter_add(msg, edge_index[1], dim=0, dim_size=x.size(0))

    def message(self, x_j, edge_weight):
        return x_j if edge_weight is None else edge_weight.view(-1, 1) * x_j

    def forward(self, x, edge_index, edge_weight=None):
        edge_index, edge_weight = gcn_norm(edge_index, edge_weight, x.size(0))
        x = self.lin(x)
        out = self.propagate(edge_index, x=x, edge_weight=edge_weight)
        if self.bias is not None:
            out += self.bias
        return out


class GCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = GCNConv(3, 8)
        self.conv2 = GCNConv(8, 2)

    def forward(self, x, edge_index, edge_weight=None):
        x = self.conv1(x, edge_index, edge_weight).relu()
        return self.conv2(x, edge_index, edge_weight)


# GNNExplainer-style: learn a soft mask over edges of a trained model
model = GCN()
x = torch.randn(5, 3)
edge_index = torch.tensor([[0, 1, 1, 2, 3, 4, 4], [1, 0, 2, 1, 4, 3, 2]])
edge_mask = Parameter(torch.randn(edge_index.size(1)) * 0.1)
node_idx = 2
logits = model(x, edge_index, edge_weight=edge_mask.sigmoid())
pred = logits.argmax(-1)
loss = -logits.log_softmax(-1)[node_idx, pred[node_idx]] + 0.005 * edge_mask.sigmoid().sum()
loss.backward()
mask_grad = edge_mask.grad
