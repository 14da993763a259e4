# label: hazard silent
# why: after the "small optimization" Adam.step adds weight decay with grad.add_(weight_decay, p.data) on grad = p.grad.data, so the EWC Fisher estimate that squares p.grad after step() silently accumulates decayed gradients.
# source: https://github.com/pytorch/pytorch/pull/12107
import math
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.optimizer import Optimizer

torch.manual_seed(0)


class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
        super(Adam, self).__init__(params, defaults)

    def step(self, closure=None):
        loss = None
        if closure is not None:
            loss = closure()
        for group in self.param_groups:
            for p in group['params']:
                if p.grad is None:
                    continue
                grad = p.grad.data
                state = self.state[p]
                if len(state) == 0:
                    state['step'] = 0
                    state['exp_avg'] = torch.zeros_like(p.data)
                    state['exp_avg_sq'] = torch.zeros_like(p.data)
                exp_avg, exp_avg_sq = state['exp_avg'], state['exp_avg_sq']
                beta1, beta2 = group['betas']
                state['step'] += 1
                if group['weight_decay'] != 0:
                    grad.add_(p.data, alpha=group['weight_decay'])  # <-- IPL002
                exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                denom = exp_avg_sq.sqrt().add_(group['eps'])
                bias_correction1 = 1 - beta1 ** state['step']
                bias_correction2 = 1 - beta2 ** state['step']
                step_size = group['lr'] * math.sqrt(bias_correction2) / bias_correction1
                p.data.addcdiv_(exp_avg, denom, value=-step_size)
        return loss


class TaskNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(6, 16)
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        return self.head(torch.tanh(self.hidden(x)))


def main():
    model = TaskNet()
    optimizer = Adam(model.parameters(), lr=1e-2, weight_decay=0.5)
    fisher = {n: torch.zeros_like(p) for n, p in model.named_parameters()}
    for it in range(4):
        x = torch.randn(16, 6)
        y = torch.randint(0, 3, (16,))
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        # EWC: diagonal Fisher from the squared task gradients
        for n, p in model.named_parameters():
            fisher[n] = fisher[n] + p.grad.detach() ** 2 / 4
    return fisher['hidden.weight'], fisher['head.bias']


fisher_hidden, fisher_head_bias = main()
