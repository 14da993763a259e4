# label: hazard raises
# why: in the differentiable (inplace=False) Adam transform, sqrt_() saves its result for backward and the chained add_(eps) then overwrites that result, so the meta-gradient backward fails
# source: https://github.com/metaopt/torchopt/commit/f39849353e459172d90673868bb7d7d78bc3eb68
from typing import NamedTuple

import torch
import torch.nn.functional as F

torch.manual_seed(0)


def tree_map(fn, *trees):
    return [fn(*leaves) for leaves in zip(*trees)]


class ScaleByAdamState(NamedTuple):
    mu: list
    nu: list
    count: torch.Tensor


def _update_moment(updates, moments, decay, order):
    if order == 1:
        return tree_map(lambda g, t: t * decay + (1 - decay) * g, updates, moments)
    return tree_map(lambda g, t: t * decay + (1 - decay) * g * g, updates, moments)


def _bias_correction(moment, decay, count):
    bias_correction = 1 - decay ** count
    return tree_map(lambda t: t / bias_correction, moment)


def scale_by_adam(b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0):
    def init_fn(params):
        mu = tree_map(torch.zeros_like, params)
        nu = tree_map(torch.zeros_like, params)
        return ScaleByAdamState(mu=mu, nu=nu, count=torch.zeros(()))

    def update_fn(updates, state, inplace=False):
        mu = _update_moment(updates, state.mu, b1, order=1)
        nu = _update_moment(updates, state.nu, b2, order=2)
        count_inc = state.count + 1
        mu_hat = _bias_correction(mu, b1, count_inc)
        nu_hat = _bias_correction(nu, b2, count_inc)

        def f(g, m, v):
            return m.div(v.add(eps_root).sqrt_().add_(eps)) if g is not None else None  # <-- IPL001: add_ overwrites the result sqrt_ saved for backward

        updates = tree_map(f, updates, mu_hat, nu_hat)
        return updates, ScaleByAdamState(mu=mu, nu=nu, count=count_inc)

    return init_fn, update_fn


class MetaAdam:
    def __init__(self, params, lr):
        self.lr = lr
        self.init_fn, self.update_fn = scale_by_adam(eps_root=1e-8)
        self.state = self.init_fn(params)

    def step(self, loss, params):
        grads = torch.autograd.grad(loss, params, create_graph=True)
        updates, self.state = self.update_fn(list(grads), self.state)
        return [p - self.lr * u for p, u in zip(params, updates)]


def inner_loss(params, x, y):
    w, b = params
    return F.mse_loss(x @ w + b, y)


meta_init = torch.randn(3, 1, requires_grad=True)
meta_bias = torch.zeros(1, requires_grad=True)
x_spt, y_spt = torch.randn(8, 3), torch.randn(8, 1)
x_qry, y_qry = torch.randn(8, 3), torch.randn(8, 1)

params = [meta_init * 1.0, meta_bias * 1.0]
inner_opt = MetaAdam(params, lr=0.1)
for _ in range(2):
    params = inner_opt.step(inner_loss(params, x_spt, y_spt), params)

outer_loss = inner_loss(params, x_qry, y_qry)
outer_loss.backward()
