# label: safe
# why: after the fix the differentiable path uses `.sqrt_().add(eps)`: the in-place sqrt_ only overwrites the fresh `v.add(eps_root)` temporary (AddBackward saves nothing) and addcmul_ writes into the fresh `t.mul(decay)`, so no saved tensor is changed and meta-gradients are correct.
# source: https://github.com/metaopt/torchopt/commit/ce6005458fad87d3d5c444af9aeff0bf0ae0efda
from typing import NamedTuple

import torch
import torch.nn.functional as F

torch.manual_seed(0)


def tree_map(f, *trees):
    return [f(*leaves) for leaves in zip(*trees)]


class ScaleByAdamState(NamedTuple):
    mu: list
    nu: list
    count: list


def _update_moment(updates, moments, decay, *, order, inplace=True):
    """Compute the exponential moving average of the ``order``-th moment."""
    if inplace:
        if order == 2:
            def f(g, t):
                return t.mul_(decay).addcmul_(g, g, value=1 - decay) if g is not None else t
        else:
            def f(g, t):
                return t.mul_(decay).add_(g, alpha=1 - decay) if g is not None else t
    else:
        if order == 2:
            def f(g, t):
                return t.mul(decay).addcmul_(g, g, value=1 - decay) if g is not None else t
        else:
            def f(g, t):
                return t.mul(decay).add_(g, alpha=1 - decay) if g is not None else t
    return tree_map(f, updates, moments)


def _bias_correction(moment, decay, count):
    def f(t, c):
        return t.div(1 - decay ** c)
    return tree_map(f, moment, count)


def _scale_by_adam(b1=0.9, b2=0.999, eps=1e-8, eps_root=0.0, moment_requires_grad=False):
    def init_fn(params):
        zero = tree_map(lambda t: torch.zeros(1, dtype=torch.int32).squeeze_(), params)
        mu = tree_map(lambda t: torch.zeros_like(t, requires_grad=moment_requires_grad), params)
        nu = tree_map(lambda t: torch.zeros_like(t, requires_grad=moment_requires_grad), params)
        return ScaleByAdamState(mu=mu, nu=nu, count=zero)

    def update_fn(updates, state, *, params=None, inplace=True):
        mu = _update_moment(updates, state.mu, b1, order=1, inplace=inplace)
        nu = _update_moment(updates, state.nu, b2, order=2, inplace=inplace)
        count_inc = tree_map(lambda c: c + 1, state.count)
        mu_hat = _bias_correction(mu, b1, count_inc)
        nu_hat = _bias_correction(nu, b2, count_inc)

        if inplace:
            def f(g, m, v):
                return m.div_(v.add_(eps_root).sqrt_().add_(eps)) if g is not None else None
        else:
            def f(g, m, v):
                return m.div(v.add(eps_root).sqrt_().add(eps)) if g is not None else None

        updates = tree_map(f, updates, mu_hat, nu_hat)
        return updates, ScaleByAdamState(mu=mu, nu=nu, count=count_inc)

    return init_fn, update_fn


def main():
    # MetaAdam-style differentiable inner loop: the meta-parameters are the initial weights
    w = torch.randn(4, 3, requires_grad=True)
    b = torch.zeros(3, requires_grad=True)
    init_fn, update_fn = _scale_by_adam(eps_root=1e-8)
    params = [w, b]
    state = init_fn(params)
    x_spt, y_spt = torch.randn(8, 4), torch.randint(0, 3, (8,))
    x_qry, y_qry = torch.randn(8, 4), torch.randint(0, 3, (8,))

    for _ in range(2):
        inner_loss = F.cross_entropy(x_spt @ params[0] + params[1], y_spt)
        grads = torch.autograd.grad(inner_loss, params, create_graph=True)
        updates, state = update_fn(list(grads), state, inplace=False)
        params = [p - 0.1 * u for p, u in zip(params, updates)]

    outer_loss = F.cross_entropy(x_qry @ params[0] + params[1], y_qry)
    outer_loss.backward()
    return outer_loss.detach(), w.grad, b.grad


outer_loss, w_grad, b_grad = main()
