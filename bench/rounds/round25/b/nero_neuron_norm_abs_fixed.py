# label: safe no-twin
# why: the fixed neuron_norm() returns x.abs() for 1-D tensors, so measuring the norm of a bias or its gradient no longer rewrites them; Nero's remaining in-place writes hit parameters under no_grad, as an optimizer step should.
# source: https://github.com/kozistr/pytorch_optimizer/commit/5b8a636b7213762625b0ff979d41c82ac7da787c ("fix: neuron_norm", reverting the x.abs_() of fa1fece8)
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.optimizer import Optimizer

torch.manual_seed(0)


def neuron_norm(x: torch.Tensor) -> torch.Tensor:
    if x.dim() <= 1:
        return x.abs()

    view_shape = [x.shape[0]] + [1] * (x.dim() - 1)
    x = x.view(x.shape[0], -1)

    return x.norm(dim=1).view(*view_shape)


def neuron_mean(x: torch.Tensor) -> torch.Tensor:
    if x.dim() <= 1:
        raise ValueError('[-] neuron_mean not defined on 1D tensors.')

    view_shape = [x.shape[0]] + [1] * (x.dim() - 1)
    x = x.view(x.shape[0], -1)

    return x.mean(dim=1).view(*view_shape)


class Nero(Optimizer):
    """Learning by Turning: Neural Architecture Aware Optimisation"""

    def __init__(self, params, lr: float = 0.01, beta: float = 0.999, constraints: bool = True):
        self.lr = lr
        self.beta = beta
        defaults = dict(lr=lr, constraints=constraints)
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        for group in self.param_groups:
            for p in group['params']:
                if p.grad is None:
                    continue

                grad = p.grad

                state = self.state[p]
                if len(state) == 0:
                    if group['constraints'] and p.dim() > 1:
                        p.sub_(neuron_mean(p))
                        p.div_(neuron_norm(p))

                    state['step'] = 0
                    state['exp_avg_sq'] = torch.zeros_like(neuron_norm(p))
                    state['scale'] = neuron_norm(p).mean()
                    if state['scale'] == 0.0:
                        state['scale'] = 0.01

                state['step'] += 1

                bias_correction: float = 1.0 - self.beta ** state['step']
                state['exp_avg_sq'] = self.beta * state['exp_avg_sq'] + (1.0 - self.beta) * neuron_norm(grad) ** 2

                grad_normed = grad / (state['exp_avg_sq'] / bias_correction).sqrt()
                grad_normed[torch.isnan(grad_normed)] = 0.0

                p.sub_(group['lr'] * state['scale'] * grad_normed)

                if group['constraints'] and p.dim() > 1:
                    p.sub_(neuron_mean(p))
                    p.div_(neuron_norm(p))

        return loss


def main():
    model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3))
    optimizer = Nero(model.parameters(), lr=0.01)
    for _ in range(3):
        x = torch.randn(16, 6)
        y = torch.randint(0, 3, (16,))
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
    return model[0].bias.detach().clone(), model[2].bias.detach().clone()


hidden_bias, head_bias = main()
