# label: hazard silent
# why: without nesterov SGDP sets d_p = buf (the momentum state itself), so the in-place projection (perturb -= ...) and the cautious mask (d_p.mul_(mask)) silently rewrite the stored momentum that the next step reads.
# source: https://github.com/huggingface/pytorch-image-models/commit/72cf1a686aa3cdbe676b83df424c099798a1e959
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.optimizer import Optimizer

torch.manual_seed(0)


def _channel_view(x) -> torch.Tensor:
    return x.reshape(x.size(0), -1)


def _layer_view(x) -> torch.Tensor:
    return x.reshape(1, -1)


def projection(p, grad, perturb, delta: float, wd_ratio: float, eps: float, caution: bool = False):
    wd = 1.0
    expand_size = (-1,) + (1,) * (len(p.shape) - 1)
    for view_func in [_channel_view, _layer_view]:
        param_view = view_func(p)
        grad_view = view_func(grad)
        cosine_sim = F.cosine_similarity(grad_view, param_view, dim=1, eps=eps).abs_()

        if cosine_sim.max() < delta / math.sqrt(param_view.size(1)):
            p_n = p / param_view.norm(p=2, dim=1).add_(eps).reshape(expand_size)
            perturb -= p_n * view_func(p_n * perturb).sum(dim=1).reshape(expand_size)  # <-- IPL002, IPL004: perturb is the caller's momentum buffer
            wd = wd_ratio
            return perturb, wd
    return perturb, wd


class SGDP(Optimizer):
    def __init__(self, params, lr=0.1, momentum=0, dampening=0, weight_decay=0, nesterov=False, eps=1e-8, delta=0.1, wd_ratio=0.1, caution=False):
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov,
                        eps=eps, delta=delta, wd_ratio=wd_ratio, caution=caution)
        super(SGDP, self).__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            weight_decay = group["weight_decay"]
            momentum = group["momentum"]
            dampening = group["dampening"]
            nesterov = group["nesterov"]
            caution = group.get("caution", False)

            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad
                state = self.state[p]
                if len(state) == 0:
                    state["momentum"] = torch.zeros_like(p)

                # SGD
                buf = state["momentum"]
                buf.mul_(momentum).add_(grad, alpha=1.0 - dampening)
                if nesterov:
                    d_p = grad + momentum * buf
                else:
                    d_p = buf

                # Projection
                wd_ratio = 1.0
                if len(p.shape) > 1:
                    d_p, wd_ratio = projection(p, grad, d_p, group["delta"], group["wd_ratio"], group["eps"], caution)
                elif caution:
                    mask = (d_p * grad > 0).to(grad.dtype)
                    mask.div_(mask.mean().clamp_(min=1e-3))
                    d_p.mul_(mask)  # <-- IPL002: d_p is state["momentum"], read again next step

                # Weight decay
                if weight_decay != 0:
                    p.mul_(1.0 - group["lr"] * group["weight_decay"] * wd_ratio / (1 - momentum))

                # Step
                p.add_(d_p, alpha=-group["lr"])


model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4), nn.ReLU(),
                      nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 3))
optimizer = SGDP(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4, caution=True)
images = torch.randn(6, 3, 6, 6)
labels = torch.tensor([0, 1, 2, 0, 1, 2])
for step in range(3):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(images), labels)
    loss.backward()
    optimizer.step()
conv_momentum = optimizer.state[model[0].weight]["momentum"].clone()
final_loss = F.cross_entropy(model(images), labels).detach()
