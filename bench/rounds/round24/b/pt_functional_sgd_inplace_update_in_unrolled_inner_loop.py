# label: hazard raises
# why: the functional SGD used inside an unrolled (create_graph) inner loop updates each parameter with `param.add_(d_p, alpha=-lr)`; the parameters are the rows of the caller's differentiable model tensor (unbind views), so the in-place update of a multi-output view is rejected by autograd and the path cannot be differentiated.
# source: https://github.com/pytorch/pytorch/pull/61252
from typing import List, Optional

import torch
from torch import Tensor, autograd

torch.manual_seed(0)


def sgd(params: List[Tensor],
        d_p_list: List[Tensor],
        momentum_buffer_list: List[Optional[Tensor]],
        *,
        weight_decay: float,
        momentum: float,
        lr: float,
        dampening: float,
        nesterov: bool):
    r"""Functional API that performs SGD algorithm computation (torch.optim._functional.sgd)."""
    for i, param in enumerate(params):
        d_p = d_p_list[i]
        if weight_decay != 0:
            d_p = d_p.add(param, alpha=weight_decay)
        if momentum != 0:
            buf = momentum_buffer_list[i]
            if buf is None:
                buf = torch.clone(d_p).detach()
                momentum_buffer_list[i] = buf
            else:
                buf.mul_(momentum).add_(d_p, alpha=1 - dampening)
            d_p = d_p.add(buf, alpha=momentum) if nesterov else buf
        param.add_(d_p, alpha=-lr)  # <-- IPL004


class TestDifferentiableOptimizer:
    def __init__(self, lr=0.01):
        self.defaults = dict(lr=lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False)

    def _call_functional_optimizer(self, opt, params, grads):
        momentum_buffer_list = [None for _ in params]
        opt(params, grads, momentum_buffer_list,
            weight_decay=self.defaults['weight_decay'],
            momentum=self.defaults['momentum'],
            lr=self.defaults['lr'],
            dampening=self.defaults['dampening'],
            nesterov=self.defaults['nesterov'])

    def inner_loop(self, model):
        for epoch in range(10):
            loss = model[0].exp().sum()
            step, = autograd.grad(loss, model, create_graph=True)
            self._call_functional_optimizer(sgd, model, step)
        return model[0].sum()


def main():
    model = [torch.randn(2, 3, dtype=torch.double, requires_grad=True)]
    test = TestDifferentiableOptimizer(lr=0.01)
    out = test.inner_loop(model[0].clone())
    meta_grad, = autograd.grad(out, model[0])
    return meta_grad


result = main()
