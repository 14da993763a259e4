# label: safe
# why: deal_nan clones the loss before zeroing its NaN entries in place, so the loss tensors that autograd saved are never touched
# source: https://github.com/pyg-team/pytorch_geometric/pull/10336 (commit 278d01525970fa7acc2455ba0c3d3e6ee35e3c7f)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def deal_nan(x):
    if isinstance(x, torch.Tensor):
        x = x.clone()
        x[torch.isnan(x)] = 0.0
    return x


class GCN(nn.Module):
    def __init__(self, in_channels, hidden, out_channels):
        super().__init__()
        self.lin1 = nn.Linear(in_channels, hidden)
        self.lin2 = nn.Linear(hidden, out_channels)

    def forward(self, x, adj):
        x = F.relu(self.lin1(adj @ x))
        return self.lin2(adj @ x)


class GLEM(nn.Module):
    def __init__(self, gnn):
        super().__init__()
        self.gnn = gnn

    def loss(self, logits, labels, loss_func, is_gold, pseudo_labels=None, pl_weight=0.5, is_augmented=True):
        if is_augmented and (sum(~is_gold) > 0):
            mle_loss = deal_nan(loss_func(logits[is_gold], labels[is_gold]))
            # all other labels beside from ground truth(gold labels)
            pseudo_label_loss = deal_nan(loss_func(logits[~is_gold], pseudo_labels[~is_gold]))
            loss = pl_weight * pseudo_label_loss + (1 - pl_weight) * mle_loss
        else:
            loss = loss_func(logits, labels)
        return loss


n = 8
adj = (torch.rand(n, n) > 0.5).float() + torch.eye(n)
adj = adj / adj.sum(1, keepdim=True)
x = torch.randn(n, 5)
labels = torch.randint(0, 3, (n,))
pseudo_labels = torch.randint(0, 3, (n,))
is_gold = torch.tensor([True, False, True, False, False, True, False, False])

model = GLEM(GCN(5, 8, 3))
logits = model.gnn(x, adj)
loss = model.loss(logits, labels, F.cross_entropy, is_gold, pseudo_labels)
loss.backward()
