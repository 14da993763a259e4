# label: hazard raises
# why: relu saves its output; scattering neighbour messages into the activated node states in place breaks its backward
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MessagePassingLayer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.node = nn.Linear(dim, dim)
        self.msg = nn.Linear(2 * dim, dim)

    def forward(self, x, edge_index):
        src, dst = edge_index
        h = F.relu(self.node(x))
        m = self.msg(torch.cat([h[src], h[dst]], dim=-1))
        h.index_add_(0, dst, m)  # <-- IPL001
        return h


num_nodes, dim = 5, 4
x = torch.randn(num_nodes, dim)
edge_index = torch.tensor([[0, 1, 2, 3, 4, 0], [1, 2, 3, 4, 0, 2]])
layer = MessagePassingLayer(dim)
h = layer(x, edge_index)
graph_emb = h.mean(0)
loss = graph_emb.pow(2).sum()
loss.backward()
node_grad = layer.node.weight.grad
