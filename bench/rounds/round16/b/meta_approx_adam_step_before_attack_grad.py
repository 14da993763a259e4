# label: hazard raises no-twin
# why: inside inner_train the Adam step updates the surrogate weights in place after loss_labeled.backward(retain_graph=True), but attack_loss's graph (same forward) saved those weights, so autograd.grad(attack_loss, adj_changes) fails
# source: https://github.com/ChandlerBang/pytorch-gnn-meta-attack/issues/2 (file metattack.py @ 388166d4b5235a41e8bd001183ead2ce4a993061, MetaApprox.inner_train)
import math

import torch
from torch import optim
from torch.nn import functional as F
from torch.nn.parameter import Parameter

torch.manual_seed(0)


def normalize_adj_tensor(adj):
    mx = adj + torch.eye(adj.shape[0])
    rowsum = mx.sum(1)
    r_inv = rowsum.pow(-1 / 2).flatten()
    r_inv[torch.isinf(r_inv)] = 0.
    r_mat_inv = torch.diag(r_inv)
    mx = r_mat_inv @ mx
    mx = mx @ r_mat_inv
    return mx


class MetaApprox(torch.nn.Module):
    def __init__(self, nfeat, hidden_sizes, nclass, nnodes, train_iters, lambda_=0.5, lr=0.01):
        super().__init__()
        self.hidden_sizes = hidden_sizes
        self.train_iters = train_iters
        self.lambda_ = lambda_
        self.lr = lr
        self.with_bias = True
        self.adj_changes = Parameter(torch.FloatTensor(nnodes, nnodes))
        self.adj_changes.data.fill_(0)
        self.grad_sum = torch.zeros(nnodes, nnodes)

        self.weights = []
        self.biases = []
        previous_size = nfeat
        for ix, nhid in enumerate(self.hidden_sizes):
            self.weights.append(Parameter(torch.FloatTensor(previous_size, nhid)))
            self.biases.append(Parameter(torch.FloatTensor(nhid)))
            previous_size = nhid
        self.weights.append(Parameter(torch.FloatTensor(previous_size, nclass)))
        self.biases.append(Parameter(torch.FloatTensor(nclass)))
        self._initialize()

    def _initialize(self):
        for w, b in zip(self.weights, self.biases):
            stdv = 1. / math.sqrt(w.size(1))
            w.data.uniform_(-stdv, stdv)
            b.data.uniform_(-stdv, stdv)
        self.optimizer = optim.Adam(self.weights + self.biases, lr=self.lr)

    def inner_train(self, features, modified_adj, idx_train, idx_unlabeled, labels, labels_self_training):
        adj_norm = normalize_adj_tensor(modified_adj)
        for j in range(self.train_iters):
            hidden = features
            for w, b in zip(self.weights, self.biases):
                b = b if self.with_bias else 0
                hidden = adj_norm @ hidden @ w + b
            output = F.log_softmax(hidden, dim=1)
            loss_labeled = F.nll_loss(output[idx_train], labels[idx_train])
            loss_unlabeled = F.nll_loss(output[idx_unlabeled], labels_self_training[idx_unlabeled])
            attack_loss = self.lambda_ * loss_labeled + (1 - self.lambda_) * loss_unlabeled

            self.optimizer.zero_grad()
            loss_labeled.backward(retain_graph=True)
            self.optimizer.step()  # <-- IPL001: weights updated in place while attack_loss's graph still needs them

            self.adj_changes.grad.zero_()
            self.grad_sum += torch.autograd.grad(attack_loss, self.adj_changes, retain_graph=True)[0]

    def forward(self, features, ori_adj, labels, idx_train, idx_unlabeled, labels_self_training):
        adj_changes_square = self.adj_changes - torch.diag(torch.diag(self.adj_changes, 0))
        adj_changes_symm = torch.clamp(adj_changes_square + torch.transpose(adj_changes_square, 1, 0), -1, 1)
        modified_adj = adj_changes_symm + ori_adj
        self._initialize()
        self.grad_sum.data.fill_(0)
        self.inner_train(features, modified_adj, idx_train, idx_unlabeled, labels, labels_self_training)
        adj_meta_grad = self.grad_sum * (-2 * modified_adj + 1)
        adj_meta_grad -= adj_meta_grad.min()
        return adj_meta_grad


nnodes, nfeat = 6, 3
ori_adj = (torch.rand(nnodes, nnodes) > 0.5).float()
ori_adj = ((ori_adj + ori_adj.t()) > 0).float()
features = torch.randn(nnodes, nfeat)
labels = torch.tensor([0, 1, 0, 1, 1, 0])
idx_train = torch.tensor([0, 1, 2])
idx_unlabeled = torch.tensor([3, 4, 5])
labels_self_training = torch.tensor([0, 1, 0, 0, 1, 1])

attacker = MetaApprox(nfeat, [4], 2, nnodes, train_iters=2)
adj_meta_grad = attacker(features, ori_adj, labels, idx_train, idx_unlabeled, labels_self_training)
