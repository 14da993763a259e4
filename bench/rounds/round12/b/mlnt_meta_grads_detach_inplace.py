# label: hazard raises
# why: the meta step tries to cut the fast-weight gradients out of the graph with grad.detach_(), but the gradient that autograd.grad returns for a Linear weight is a view (TBackward), and views cannot be detached in place
# source: https://github.com/LiJunnan1992/MLNT/issues/8 (original main.py of commit 91eac84; fixed in 8f29c3d to grad = grad.detach())
import math
import random
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(0)
random.seed(0)


class Net(nn.Module):
    def __init__(self, num_classes=5):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, num_classes)

    def forward(self, x, weights=None, get_feat=False):
        if weights is None:
            feat = F.relu(self.fc1(x))
            out = self.fc2(feat)
        else:
            feat = F.relu(F.linear(x, weights['fc1.weight'], weights['fc1.bias']))
            out = F.linear(feat, weights['fc2.weight'], weights['fc2.bias'])
        if get_feat:
            return out, feat
        return out


class Args:
    num_fast = 2
    perturb_ratio = 0.5
    meta_lr = 0.2
    alpha = 1.0
    eps = 0.99
    start_iter = 0
    mid_iter = 2


args = Args()
net, tch_net, pretrain_net = Net(), Net(), Net()
for param in tch_net.parameters():
    param.requires_grad = False
for param in pretrain_net.parameters():
    param.requires_grad = False
criterion = nn.CrossEntropyLoss()
consistent_criterion = nn.KLDivLoss(reduction="batchmean")
optimizer = optim.SGD(net.parameters(), lr=0.02, momentum=0.9, weight_decay=1e-3)

train_loader = [(torch.randn(8, 8), torch.randint(0, 5, (8,))) for _ in range(3)]
init = True
epoch = 1
for batch_idx, (inputs, targets) in enumerate(train_loader):
    optimizer.zero_grad()
    outputs = net(inputs)               # Forward Propagation
    class_loss = criterion(outputs, targets)  # Loss
    class_loss.backward(retain_graph=True)

    if batch_idx > args.start_iter or epoch > 1:
        u = (batch_idx - args.start_iter) / (args.mid_iter - args.start_iter)
        alpha = args.alpha * math.exp(-5 * (1 - u) ** 2)

        if init:
            init = False
            for param, param_tch in zip(net.parameters(), tch_net.parameters()):
                param_tch.data.copy_(param.data)
        else:
            for param, param_tch in zip(net.parameters(), tch_net.parameters()):
                param_tch.data.mul_(args.eps).add_((1 - args.eps) * param.data)

        _, feats = pretrain_net(inputs, get_feat=True)
        tch_outputs = tch_net(inputs, get_feat=False)
        p_tch = F.softmax(tch_outputs, dim=1)
        p_tch.detach_()

        for i in range(args.num_fast):
            targets_fast = targets.clone()
            randidx = torch.randperm(targets.size(0))
            for n in range(int(targets.size(0) * args.perturb_ratio)):
                num_neighbor = 3
                idx = randidx[n]
                feat = feats[idx]
                dist = torch.sum((feat - feats) ** 2, dim=1)
                _, neighbor = torch.topk(dist, num_neighbor + 1, largest=False)
                targets_fast[idx] = targets[neighbor[random.randint(1, num_neighbor)]]

            fast_loss = criterion(outputs, targets_fast)

            grads = torch.autograd.grad(fast_loss, net.parameters(), create_graph=True, retain_graph=True, only_inputs=True)
            for grad in grads:
                grad.detach_()  # <-- IPL007: some of these gradients are views (the Linear weight grad comes out of a transpose), which cannot be detached in place
                grad.requires_grad = False

            fast_weights = OrderedDict((name, param - args.meta_lr * grad) for ((name, param), grad) in zip(net.named_parameters(), grads))
            fast_out = net.forward(inputs, fast_weights)
            logp_fast = F.log_softmax(fast_out, dim=1)
            consistent_loss = consistent_criterion(logp_fast, p_tch)
            consistent_loss = consistent_loss * alpha / args.num_fast
            consistent_loss.backward(retain_graph=True)

    optimizer.step()  # Optimizer update
