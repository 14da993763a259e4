# label: hazard silent
# why: Adan.step computes the denominator with exp_avg_nest.sqrt_(), taking the square root of the persistent second-moment state in place, so every later step decays and accumulates on sqrt(v) instead of v.
# source: https://github.com/kozistr/pytorch_optimizer/commit/402723c66c3137af3cf14e6a5d3a0ee736becf4e ("fix: de_nom")
import math
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.optimizer import Optimizer

torch.manual_seed(0)


class Adan(Optimizer):
    """Adaptive Nesterov Momentum Algorithm."""

    def __init__(self, params, lr=1e-3, betas=(0.98, 0.92, 0.99), weight_decay=0.0, weight_decouple=False, eps=1e-8):
        self.eps = eps
        defaults = dict(lr=lr, betas=betas, weight_decay=weight_decay, weight_decouple=weight_decouple)
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        for group in self.param_groups:
            group['step'] = group.get('step', 0) + 1
            beta1, beta2, beta3 = group['betas']
            bias_correction1 = 1.0 - beta1 ** group['step']
            bias_correction2 = 1.0 - beta2 ** group['step']
            bias_correction3_sq = math.sqrt(1.0 - beta3 ** group['step'])
            for p in group['params']:
                if p.grad is None:
                    continue
                grad = p.grad
                state = self.state[p]
                if len(state) == 0:
                    state['exp_avg'] = torch.zeros_like(p)
                    state['exp_avg_diff'] = torch.zeros_like(p)
                    state['exp_avg_nest'] = torch.zeros_like(p)
                    state['previous_grad'] = grad.clone()

                grad_diff = -state['previous_grad']
                grad_diff.add_(grad)
                state['previous_grad'].copy_(grad)

                update = grad + beta2 * grad_diff

                exp_avg, exp_avg_diff, exp_avg_nest = state['exp_avg'], state['exp_avg_diff'], state['exp_avg_nest']
                exp_avg.mul_(beta1).add_(grad, alpha=1.0 - beta1)
                exp_avg_diff.mul_(beta2).add_(grad_diff, alpha=1.0 - beta2)
                exp_avg_nest.mul_(beta3).addcmul_(update, update, value=1.0 - beta3)

                de_nom = (exp_avg_nest.sqrt_() / bias_correction3_sq).add_(self.eps)  # <-- IPL002
                perturb = (exp_avg / bias_correction1 + beta2 * exp_avg_diff / bias_correction2).div_(de_nom)

                if group['weight_decouple']:
                    p.mul_(1.0 - group['lr'] * group['weight_decay'])
                    p.add_(perturb, alpha=-group['lr'])
                else:
                    p.add_(perturb, alpha=-group['lr'])
                    p.div_(1.0 + group['lr'] * group['weight_decay'])
        return loss


class GCN(nn.Module):
    """Dense two-layer graph convolution: H' = A_hat @ H @ W."""

    def __init__(self, in_dim, hidden, out_dim):
        super().__init__()
        self.lin1 = nn.Linear(in_dim, hidden)
        self.lin2 = nn.Linear(hidden, out_dim)

    def forward(self, x, a_hat):
        h = torch.relu(a_hat @ self.lin1(x))
        return a_hat @ self.lin2(h)


def main():
    n = 6
    adj = (torch.rand(n, n) > 0.5).float()
    adj = ((adj + adj.t()) > 0).float() + torch.eye(n)
    deg_inv_sqrt = adj.sum(1).pow(-0.5)
    a_hat = deg_inv_sqrt[:, None] * adj * deg_inv_sqrt[None, :]
    x = torch.randn(n, 5)
    y = torch.randint(0, 3, (n,))
    model = GCN(5, 8, 3)
    optimizer = Adan(model.parameters(), lr=1e-2, weight_decay=0.02)
    for _ in range(4):
        optimizer.zero_grad()
        F.cross_entropy(model(x, a_hat), y).backward()
        optimizer.step()
    p = model.lin1.weight
    return optimizer.state[p]['exp_avg_nest'].clone(), p.detach().clone()


lin1_exp_avg_nest, lin1_weight = main()
