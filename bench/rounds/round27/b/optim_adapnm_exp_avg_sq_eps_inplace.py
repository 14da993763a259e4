# label: hazard silent no-twin
# why: AdaPNM builds its denominator with exp_avg_sq.add_(eps), which adds eps into the optimizer's second-moment state itself, so every later step silently reads an exp_avg_sq inflated by the accumulated eps.
# source: https://github.com/kozistr/pytorch_optimizer/commit/88292012dd4e22acfc4031daeb6a0b02bf8351bf (pre-change pytorch_optimizer/optimizer/adapnm.py, AdaPNM.step)
import math

import torch
from torch.optim.optimizer import Optimizer

torch.manual_seed(0)


class AdaPNM(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999, 1.0), weight_decay=0.0, weight_decouple=True,
                 amsgrad=False, adam_debias=False, eps=1e-8):
        defaults = dict(lr=lr, betas=betas, weight_decay=weight_decay, weight_decouple=weight_decouple,
                        amsgrad=amsgrad, adam_debias=adam_debias, eps=eps)
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()

        for group in self.param_groups:
            if 'step' in group:
                group['step'] += 1
            else:
                group['step'] = 1

            beta1, beta2, beta3 = group['betas']
            noise_norm = math.sqrt((1 + beta3) ** 2 + beta3 ** 2)
            bias_correction1 = 1 - beta1 ** group['step']
            bias_correction2_sq = math.sqrt(1 - beta2 ** group['step'])

            for p in group['params']:
                if p.grad is None:
                    continue
                grad = p.grad

                if group['weight_decouple']:
                    p.mul_(1.0 - group['lr'] * group['weight_decay'])
                else:
                    grad.add_(p, alpha=group['weight_decay'])

                state = self.state[p]
                if len(state) == 0:
                    state['exp_avg'] = torch.zeros_like(p)
                    state['exp_avg_sq'] = torch.zeros_like(p)
                    state['neg_exp_avg'] = torch.zeros_like(p)
                    if group['amsgrad']:
                        state['max_exp_avg_sq'] = torch.zeros_like(p)

                if group['step'] % 2 == 1:
                    exp_avg, neg_exp_avg = state['exp_avg'], state['neg_exp_avg']
                else:
                    exp_avg, neg_exp_avg = state['neg_exp_avg'], state['exp_avg']

                exp_avg_sq = state['exp_avg_sq']
                exp_avg.mul_(beta1 ** 2).add_(grad, alpha=1.0 - beta1 ** 2)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1.0 - beta2)

                if group['amsgrad']:
                    max_exp_avg_sq = state['max_exp_avg_sq']
                    torch.max(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
                    exp_avg_sq_hat = max_exp_avg_sq.add_(group['eps'])  # <-- IPL002
                else:
                    exp_avg_sq_hat = exp_avg_sq.add_(group['eps'])  # <-- IPL002

                de_nom = (exp_avg_sq_hat.sqrt() / bias_correction2_sq).add_(group['eps'])

                step_size = group['lr'] if group['adam_debias'] else group['lr'] / bias_correction1
                pn_momentum = exp_avg.mul(1.0 + beta3).add(neg_exp_avg, alpha=-beta3).mul(1.0 / noise_norm)
                p.addcdiv_(pn_momentum, de_nom, value=-step_size)

        return loss


def main():
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    optimizer = AdaPNM(model.parameters(), lr=1e-2, eps=1e-4)
    x, y = torch.randn(32, 4), torch.randn(32, 1)
    losses = []
    for _ in range(6):
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    exp_avg_sq = optimizer.state[model[0].weight]['exp_avg_sq'].clone()
    return torch.stack(losses), exp_avg_sq, model[0].weight.detach().clone()


losses, exp_avg_sq, weight = main()
