# label: hazard silent
# why: the 2018 SGD.step aliases d_p = p.grad.data and applies weight decay with d_p.add_(weight_decay, p.data), so every p.grad the training loop reads after step() silently contains the decay term instead of the real gradient.
# source: https://github.com/pytorch/pytorch/issues/12218
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.optimizer import Optimizer, required

torch.manual_seed(0)


class SGD(Optimizer):
    def __init__(self, params, lr=required, momentum=0, dampening=0, weight_decay=0, nesterov=False):
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov)
        super(SGD, self).__init__(params, defaults)

    def step(self, closure=None):
        loss = None
        if closure is not None:
            loss = closure()
        for group in self.param_groups:
            weight_decay = group['weight_decay']
            for p in group['params']:
                if p.grad is None:
                    continue
                d_p = p.grad.data
                if weight_decay != 0:
                    d_p.add_(p.data, alpha=weight_decay)  # <-- IPL002
                p.data.add_(d_p, alpha=-group['lr'])
        return loss


class BagOfWordsClassifier(nn.Module):
    def __init__(self, vocab_size=50, embed_dim=8, num_labels=3):
        super().__init__()
        self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, mode="mean")
        self.fc = nn.Linear(embed_dim, num_labels)

    def forward(self, text, offsets):
        return self.fc(self.embedding(text, offsets))


def grad_global_norm(model):
    return torch.stack([p.grad.norm() for p in model.parameters() if p.grad is not None]).norm()


def main():
    model = BagOfWordsClassifier()
    optimizer = SGD(model.parameters(), lr=0.5, weight_decay=0.1)
    grad_norms = []
    for step in range(3):
        text = torch.randint(0, 50, (12,))
        offsets = torch.tensor([0, 4, 8])
        labels = torch.tensor([0, 1, 2])
        optimizer.zero_grad()
        loss = F.cross_entropy(model(text, offsets), labels)
        loss.backward()
        optimizer.step()
        grad_norms.append(grad_global_norm(model))
    return torch.stack(grad_norms), model.fc.weight.detach().clone()


grad_norms, fc_weight = main()
