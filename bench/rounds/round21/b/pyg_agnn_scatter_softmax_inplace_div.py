# label: hazard raises
# why: the scatter softmax computes `output = src.exp()` and then normalizes it in place with `output /= ...`; ExpBackward saved that output, so training the AGNN attention raises in backward.
# source: https://github.com/pyg-team/pytorch_geometric/commit/94ecd2ae789c038e2e8ed9ed8e83f9adfe3eb447
from itertools import repeat

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def new(src, *sizes):
    return src.new_zeros(*sizes)


def softmax(index, src, num_nodes=None):
    num_nodes = index.max().item() + 1 if num_nodes is None else num_nodes
    sizes = list(src.size())[1:]

    output = src.exp()
    output_sum = new(output, num_nodes, *sizes)
    index_expand = index.view(-1, *repeat(1, len(sizes))).expand_as(src)
    output /= output_sum.scatter_add_(0, index_expand, output)[index]  # <-- IPL001

    return output


class AGNN(nn.Module):
    def __init__(self, requires_grad=True):
        super().__init__()
        self.beta = nn.Parameter(torch.ones(1), requires_grad=requires_grad)

    def forward(self, x, edge_index):
        row, col = edge_index
        x_norm = F.normalize(x, p=2, dim=-1)
        beta = self.beta
        alpha = beta * (x_norm[row] * x_norm[col]).sum(dim=-1)
        alpha = softmax(row, alpha, num_nodes=x.size(0))
        out = x.new_zeros(x.size()).index_add(0, row, alpha.unsqueeze(-1) * x[col])
        return out


class Net(nn.Module):
    def __init__(self, num_features, num_targets):
        super().__init__()
        self.fc1 = nn.Linear(num_features, 16)
        self.conv1 = AGNN(requires_grad=False)
        self.conv2 = AGNN(requires_grad=True)
        self.fc2 = nn.Linear(16, num_targets)

    def forward(self, x, edge_index):
        x = F.dropout(x, p=0.5, training=self.training)
        x = F.relu(self.fc1(x))
        x = self.conv1(x, edge_index)
        x = self.conv2(x, edge_index)
        x = F.dropout(x, p=0.5, training=self.training)
        return F.log_softmax(self.fc2(x), dim=1)


def main():
    num_nodes, num_features, num_targets = 12, 8, 3
    src = torch.arange(num_nodes).repeat_interleave(3)
    dst = torch.randint(0, num_nodes, (num_nodes * 3,))
    edge_index = torch.stack([torch.cat([src, torch.arange(num_nodes)]), torch.cat([dst, torch.arange(num_nodes)])])
    x = torch.randn(num_nodes, num_features)
    target = torch.randint(0, num_targets, (num_nodes,))
    model = Net(num_features, num_targets)
    model.train()
    loss = F.nll_loss(model(x, edge_index), target)
    loss.backward()
    return loss.detach(), model.conv2.beta.grad, model.fc1.weight.grad


loss, beta_grad, fc1_grad = main()
