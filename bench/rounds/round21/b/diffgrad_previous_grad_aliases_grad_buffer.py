# label: hazard silent no-twin
# why: DiffGrad stores `state['previous_grad'] = grad`, an alias of p.grad's buffer; zero_grad() then zeroes that buffer in place and backward accumulates the new gradient into it, so at the next step previous_grad already equals grad, diff is 0 and the friction coefficient is silently stuck at 0.5.
# source: https://github.com/jettify/pytorch-optimizer/commit/473f91dd7b53f82b1f0be45251c59c30cced5634 (PR #57)
import math

import torch
from torch.optim.optimizer import Optimizer

torch.manual_seed(0)


class DiffGrad(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
        super(DiffGrad, self).__init__(params, defaults)

    def step(self, closure=None):
        loss = None
        if closure is not None:
            loss = closure()

        for group in self.param_groups:
            beta1, beta2 = group['betas']

            for p in group['params']:
                if p.grad is None:
                    continue
                grad = p.grad.data
                state = self.state[p]

                # State initialization
                if len(state) == 0:
                    state['step'] = 0
                    state['exp_avg'] = torch.zeros_like(p)
                    state['exp_avg_sq'] = torch.zeros_like(p)
                    state['previous_grad'] = torch.zeros_like(p)

                exp_avg, exp_avg_sq, previous_grad = (
                    state['exp_avg'],
                    state['exp_avg_sq'],
                    state['previous_grad'],
                )

                state['step'] += 1

                exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                denom = exp_avg_sq.sqrt().add_(group['eps'])

                bias_correction1 = 1 - beta1 ** state['step']
                bias_correction2 = 1 - beta2 ** state['step']

                # compute diffgrad coefficient (dfc)
                diff = torch.abs(previous_grad - grad)
                dfc = torch.div(1.0, (1.0 + torch.exp(-diff)))
                state['previous_grad'] = grad

                # update momentum with dfc
                exp_avg1 = exp_avg * dfc

                step_size = group['lr'] * math.sqrt(bias_correction2) / bias_correction1

                p.data.addcdiv_(exp_avg1, denom, value=-step_size)

        return loss


def main():
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    optimizer = DiffGrad(model.parameters(), lr=0.1)
    x = torch.randn(32, 4)
    y = x.sum(dim=1, keepdim=True).sin()
    for _ in range(5):
        # torch<2.0 semantics: gradients are zeroed in place, not released
        optimizer.zero_grad(set_to_none=False)  # <-- IPL002
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
    return loss.detach(), model[0].weight.detach().clone()


loss, first_weight = main()
