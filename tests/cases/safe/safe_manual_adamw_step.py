# label: safe no-twin
# why: a hand-written AdamW whose step() runs under @torch.no_grad and mutates params and state buffers in place only after backward, with gradient clipping via clip_grad_norm_ in between.
import math

import torch
import torch.nn as nn
from torch.optim import Optimizer


class AdamW(Optimizer):
    def __init__(self, params, lr=1e-2, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = 0
                    state["exp_avg"] = torch.zeros_like(p)
                    state["exp_avg_sq"] = torch.zeros_like(p)
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                state["step"] += 1
                p.mul_(1 - group["lr"] * group["weight_decay"])
                exp_avg.mul_(beta1)
                exp_avg.add_(grad, alpha=1 - beta1)
                exp_avg_sq.mul_(beta2)
                exp_avg_sq.addcmul_(grad, grad, value=1 - beta2)
                bias_correction1 = 1 - beta1 ** state["step"]
                bias_correction2 = 1 - beta2 ** state["step"]
                denom = (exp_avg_sq.sqrt() / math.sqrt(bias_correction2)).add_(group["eps"])
                step_size = group["lr"] / bias_correction1
                p.addcdiv_(exp_avg, denom, value=-step_size)
        return loss


torch.manual_seed(0)
net = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 1))
optimizer = AdamW(net.parameters())
xs = torch.randn(32, 3)
ys = xs.sum(1, keepdim=True).sin()

for it in range(4):
    optimizer.zero_grad(set_to_none=True)
    pred = net(xs)
    loss = (pred - ys).pow(2).mean()
    loss.backward()
    nn.utils.clip_grad_norm_(net.parameters(), max_norm=1.0)
    optimizer.step()

with torch.no_grad():
    final_loss = (net(xs) - ys).pow(2).mean()
