# label: safe
# why: _UncheckedAssign writes each new Runge-Kutta stage into a fresh slot of the scratch tensor k through .data; the earlier k[..., :i+1].matmul(beta) only saved the scalar-weighted beta and a view of slots that are never rewritten, so the gradient is exactly that of the out-of-place version.
# source: https://github.com/rtqichen/torchdiffeq/blob/03c6e63bdd5dd8c689134ff77f427a480dbb8451/torchdiffeq/_impl/rk_common.py
import collections

import torch
import torch.nn as nn

torch.manual_seed(0)

_ButcherTableau = collections.namedtuple('_ButcherTableau', 'alpha, beta, c_sol, c_error')

_BOGACKI_SHAMPINE_TABLEAU = _ButcherTableau(
    alpha=torch.tensor([1 / 2, 3 / 4, 1.], dtype=torch.float64),
    beta=[
        torch.tensor([1 / 2], dtype=torch.float64),
        torch.tensor([0., 3 / 4], dtype=torch.float64),
        torch.tensor([2 / 9, 1 / 3, 4 / 9], dtype=torch.float64),
    ],
    c_sol=torch.tensor([2 / 9, 1 / 3, 4 / 9, 0.], dtype=torch.float64),
    c_error=torch.tensor([2 / 9 - 7 / 24, 1 / 3 - 1 / 4, 4 / 9 - 1 / 3, -1 / 8], dtype=torch.float64),
)


class _UncheckedAssign(torch.autograd.Function):
    @staticmethod
    def forward(ctx, scratch, value, index):
        ctx.index = index
        scratch.data[index] = value  # sneak past the version checker
        return scratch

    @staticmethod
    def backward(ctx, grad_scratch):
        return grad_scratch, grad_scratch[ctx.index], None


def _runge_kutta_step(func, y0, f0, t0, dt, t1, tableau):
    t0 = t0.type_as(y0)
    dt = dt.type_as(y0)
    t1 = t1.type_as(y0)
    k = torch.empty(*f0.shape, len(tableau.alpha) + 1, dtype=y0.dtype, device=y0.device)
    k = _UncheckedAssign.apply(k, f0, (..., 0))
    for i, (alpha_i, beta_i) in enumerate(zip(tableau.alpha, tableau.beta)):
        if alpha_i == 1.:
            ti = t1
        else:
            ti = t0 + alpha_i * dt
        yi = y0 + k[..., :i + 1].matmul(beta_i.type_as(y0) * dt).view_as(f0)
        f = func(ti, yi)
        k = _UncheckedAssign.apply(k, f, (..., i + 1))
    y1 = yi
    f1 = k[..., -1]
    y1_error = k.matmul(dt * tableau.c_error.type_as(y0))
    return y1, f1, y1_error, k


class ODEFunc(nn.Module):
    def __init__(self):
        super(ODEFunc, self).__init__()
        self.net = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 2))

    def forward(self, t, y):
        return self.net(y ** 3)


def main():
    func = ODEFunc()
    y0 = torch.tensor([[2., 0.], [1., -1.]])
    t0 = torch.tensor(0., dtype=torch.float64)
    dt = torch.tensor(0.1, dtype=torch.float64)
    y = y0
    f = func(t0, y)
    for step in range(3):
        t1 = t0 + dt
        y, f, y_err, k = _runge_kutta_step(func, y, f, t0, dt, t1, _BOGACKI_SHAMPINE_TABLEAU)
        t0 = t1
    loss = (y ** 2).sum() + y_err.abs().sum()
    loss.backward()
    grads = [p.grad.clone() for p in func.parameters()]
    return loss.detach(), grads


loss, grads = main()
