# label: hazard silent
# why: AdEMAMix.step passes the persistent momentum buffer exp_avg to apply_cautious(), which masks its first argument in place (update.mul_(mask)), so the zeroed/rescaled entries leak into the optimizer state and every later step reads a corrupted exp_avg.
# source: https://github.com/kozistr/pytorch_optimizer/commit/4282a4ae3f7a1a437e7c2b593989e77ce981db9d ("fix: cautious")
import math
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.optimizer import Optimizer

torch.manual_seed(0)


class AdEMAMix(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999, 0.9999), alpha=5.0, eps=1e-8, cautious=True):
        defaults = dict(lr=lr, betas=betas, alpha=alpha, eps=eps)
        super().__init__(params, defaults)
        self.cautious = cautious

    @staticmethod
    def debias(beta: float, step: int) -> float:
        return 1.0 - math.pow(beta, step)

    @staticmethod
    def apply_cautious(update: torch.Tensor, grad: torch.Tensor) -> None:
        """Apply the Cautious Optimizer feature. `update` is masked in an in-place manner."""
        mask = (update * grad > 0).to(grad.dtype)
        mask.mul_(mask.numel() / (mask.sum() + 1))
        update.mul_(mask)  # <-- IPL004

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            group['step'] = group.get('step', 0) + 1
            beta1, beta2, beta3 = group['betas']
            bias_correction1 = self.debias(beta1, group['step'])
            bias_correction2_sq = math.sqrt(self.debias(beta2, group['step']))
            step_size = group['lr'] / bias_correction1
            alpha_t = group['alpha']
            beta3_t = beta3

            for p in group['params']:
                if p.grad is None:
                    continue
                grad = p.grad
                state = self.state[p]
                if len(state) == 0:
                    state['exp_avg'] = torch.zeros_like(p)
                    state['exp_avg_sq'] = torch.zeros_like(p)
                    state['exp_avg_slow'] = torch.zeros_like(p)

                exp_avg, exp_avg_sq, exp_avg_slow = state['exp_avg'], state['exp_avg_sq'], state['exp_avg_slow']

                exp_avg.mul_(beta1).add_(grad, alpha=1.0 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1.0 - beta2)
                exp_avg_slow.mul_(beta3_t).add_(grad, alpha=1.0 - beta3_t)

                de_nom = exp_avg_sq.sqrt().div_(bias_correction2_sq).add_(group['eps'])

                if self.cautious:
                    self.apply_cautious(exp_avg, grad)

                update = (exp_avg + alpha_t * exp_avg_slow).div_(de_nom)

                p.add_(update, alpha=-step_size)


def main():
    model = nn.Sequential(nn.Linear(6, 12), nn.GELU(), nn.Linear(12, 4))
    optimizer = AdEMAMix(model.parameters(), lr=1e-2)
    for _ in range(4):
        x = torch.randn(16, 6)
        y = torch.randint(0, 4, (16,))
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
    p = model[0].weight
    return optimizer.state[p]['exp_avg'].clone(), p.detach().clone()


exp_avg_state, first_weight = main()
