# label: hazard silent
# why: SGDP.step sets d_p = buf (the persistent momentum buffer) and then applies the Nesterov correction with d_p.mul_(momentum).add_(grad), so the look-ahead term is written back into state['momentum'] and compounds on every later step.
# source: https://github.com/kozistr/pytorch_optimizer/commit/65ca07fe590ebfc4f05eb76718facdde6a40baf0 ("fix: momentum_buffer")
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.optimizer import Optimizer

torch.manual_seed(0)


class SGDP(Optimizer):
    """SGD + Projection (projection step omitted: it does not run for the 1-D parameters that matter here)."""

    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov)
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        for group in self.param_groups:
            momentum = group['momentum']
            for p in group['params']:
                if p.grad is None:
                    continue
                grad = p.grad
                state = self.state[p]
                if len(state) == 0:
                    state['momentum'] = torch.zeros_like(p)

                buf = state['momentum']
                buf.mul_(momentum).add_(grad, alpha=1.0 - group['dampening'])

                d_p = buf
                if group['nesterov']:
                    d_p.mul_(momentum).add_(grad)  # <-- IPL002

                wd_ratio = 1.0
                if group['weight_decay'] > 0.0:
                    p.mul_(1.0 - group['lr'] * group['weight_decay'] * wd_ratio / (1.0 - momentum))

                p.add_(d_p, alpha=-group['lr'])
        return loss


def main():
    policy = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
    optimizer = SGDP(policy.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-4)
    for _ in range(4):
        obs = torch.randn(16, 4)
        actions = torch.randint(0, 2, (16,))
        advantages = torch.randn(16)
        log_probs = F.log_softmax(policy(obs), dim=-1).gather(1, actions.unsqueeze(1)).squeeze(1)
        loss = -(log_probs * advantages).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    p = policy[2].bias
    return optimizer.state[p]['momentum'].clone(), p.detach().clone()


head_bias_momentum, head_bias = main()
