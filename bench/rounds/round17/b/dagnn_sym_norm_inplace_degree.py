# label: safe
# why: the in-place pow_ and masked_fill_ act on the degree vector built from constant edge weights (no grad), so nothing saved for backward is modified.
# source: https://github.com/mengliu1998/DeeperGNN/pull/4
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def add_remaining_self_loops(edge_index, edge_weight, fill_value, num_nodes):
    mask = edge_index[0] != edge_index[1]
    loop_index = torch.arange(num_nodes).unsqueeze(0).repeat(2, 1)
    edge_index = torch.cat([edge_index[:, mask], loop_index], dim=1)
    edge_weight = torch.cat([edge_weight[mask], torch.full((num_nodes,), fill_value)])
    return edge_index, edge_weight


def gcn_norm(edge_index, edge_weight=None, num_nodes=None, improved=False, add_self_loops=True, dtype=None):
    fill_value = 2.0 if improved else 1.0
    if edge_weight is None:
        edge_weight = torch.ones((edge_index.size(1),), dtype=dtype)
    if add_self_loops:
        edge_index, edge_weight = add_remaining_self_loops(edge_index, edge_weight, fill_value, num_nodes)
    row, col = edge_index[0], edge_index[1]
    deg = torch.zeros(num_nodes, dtype=edge_weight.dtype).scatter_add_(0, col, edge_weight)
    deg_inv_sqrt = deg.pow_(-0.5)
    deg_inv_sqrt.masked_fill_(deg_inv_sqrt == float("inf"), 0)
    return edge_index, deg_inv_sqrt[row] * edge_weight * deg_inv_sqrt[col]


class Prop(nn.Module):
    def __init__(self, num_classes, K):
        super().__init__()
        self.K = K
        self.proj = nn.Linear(num_classes, 1)

    def propagate(self, edge_index, x, norm):
        out = torch.zeros_like(x)
        return out.index_add(0, edge_index[1], norm.view(-1, 1) * x[edge_index[0]])

    def forward(self, x, edge_index, edge_weight=None):
        edge_index, norm = gcn_norm(edge_index, edge_weight, x.size(0), dtype=x.dtype)
        preds = [x]
        for k in range(self.K):
            x = self.propagate(edge_index, x=x, norm=norm)
            preds.append(x)
        pps = torch.stack(preds, dim=1)
        retain_score = torch.sigmoid(self.proj(pps)).permute(0, 2, 1)
        return torch.matmul(retain_score, pps).squeeze()


class DAGNN(nn.Module):
    def __init__(self, num_features, hidden, num_classes, K=3, dropout=0.5):
        super().__init__()
        self.lin1 = nn.Linear(num_features, hidden)
        self.lin2 = nn.Linear(hidden, num_classes)
        self.prop = Prop(num_classes, K)
        self.dropout = dropout

    def forward(self, x, edge_index):
        x = F.dropout(x, p=self.dropout, training=self.training)
        x = F.relu(self.lin1(x))
        x = F.dropout(x, p=self.dropout, training=self.training)
        x = self.lin2(x)
        x = self.prop(x, edge_index)
        return F.log_softmax(x, dim=1)


num_nodes = 6
edge_index = torch.tensor([[0, 1, 1, 2, 3, 4, 4, 5], [1, 0, 2, 1, 4, 3, 5, 4]])
x = torch.randn(num_nodes, 5)
y = torch.randint(0, 3, (num_nodes,))
model = DAGNN(5, 8, 3)
model.eval()
out = model(x, edge_index)
loss = F.nll_loss(out, y)
loss.backward()
