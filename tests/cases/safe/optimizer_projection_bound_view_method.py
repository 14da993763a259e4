# label: safe no-twin
# why: the optimizer takes each view function from a list of its own bound methods and normalises p.data, which needs no grad, so the in-place add_ on the norm writes a tensor no graph recorded.
# source: adamp 0.3.0, adamp/adamp.py (AdamP._projection), untuned run 19
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class AdamPLike(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-2, delta=0.1, wd_ratio=0.1, eps=1e-8):
        super().__init__(params, dict(lr=lr, delta=delta, wd_ratio=wd_ratio, eps=eps))

    def _channel_view(self, x):
        return x.view(x.size(0), -1)

    def _layer_view(self, x):
        return x.view(1, -1)

    def _cosine_similarity(self, x, y, eps, view_func):
        return F.cosine_similarity(view_func(x), view_func(y), dim=1, eps=eps).abs_()

    def _projection(self, p, grad, perturb, delta, wd_ratio, eps):
        wd = 1
        expand_size = [-1] + [1] * (len(p.shape) - 1)
        for view_func in [self._channel_view, self._layer_view]:
            cosine_sim = self._cosine_similarity(grad, p.data, eps, view_func)
            if cosine_sim.max() < delta / math.sqrt(view_func(p.data).size(1)):
                p_n = p.data / view_func(p.data).norm(dim=1).view(expand_size).add_(eps)
                perturb -= p_n * view_func(p_n * perturb).sum(dim=1).view(expand_size)
                wd = wd_ratio
                return perturb, wd
        return perturb, wd

    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad.data
                perturb = grad.clone()
                if len(p.shape) > 1:
                    perturb, _ = self._projection(
                        p, grad, perturb, group["delta"], group["wd_ratio"], group["eps"]
                    )
                p.data.add_(perturb, alpha=-group["lr"])


model = nn.Linear(4, 3)
opt = AdamPLike(model.parameters(), delta=1.0)
for _ in range(2):
    opt.zero_grad()
    model(torch.randn(5, 4)).pow(2).sum().backward()
    opt.step()
print(model.weight.sum())
