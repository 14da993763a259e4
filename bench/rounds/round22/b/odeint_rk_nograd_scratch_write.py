# label: hazard raises
# why: each stage is copied into the scratch buffer k under torch.no_grad(), but the write still bumps k's version, and k[..., :i+1].matmul(beta_i * dt) saved that view of k because dt (built from the time grid t) requires grad, so backward finds the saved view modified.
# source: https://github.com/rtqichen/torchdiffeq/blob/b4a2de827db22cd47f8bae4a91f088adb125a6c3/torchdiffeq/_impl/rk_common.py (fixed by 1b93cfeca5f2503eafc4ec773353254cf077fb9f, "Demagickified runge_kutta_step")
import collections

import torch
import torch.nn as nn

torch.manual_seed(0)


class _ButcherTableau(collections.namedtuple('_ButcherTableau', 'alpha, beta, c_sol, c_error')):
    @property
    def length(self):
        return len(self.alpha)


_BOGACKI_SHAMPINE_TABLEAU = _ButcherTableau(
    alpha=torch.tensor([1 / 2, 3 / 4, 1.]),
    beta=[
        torch.tensor([1 / 2]),
        torch.tensor([0., 3 / 4]),
        torch.tensor([2 / 9, 1 / 3, 4 / 9]),
    ],
    c_sol=torch.tensor([2 / 9, 1 / 3, 4 / 9, 0.]),
    c_error=torch.tensor([2 / 9 - 7 / 24, 1 / 3 - 1 / 4, 4 / 9 - 1 / 3, -1 / 8]),
)


class _DistributeGradients(torch.autograd.Function):
    @staticmethod
    def forward(ctx, k, *fs):
        return k

    @staticmethod
    def backward(ctx, grad_k):
        return (grad_k, *grad_k.unbind(dim=-1))


def _runge_kutta_step(func, y0, f0, t0, dt, tableau):
    # We copy all the func evaluations into this buffer k, as that means we can do the subsequent
    # matrix-vector products faster, as it all happens in PyTorch.
    k = torch.empty(*f0.shape, tableau.length + 1, dtype=f0.dtype, device=f0.device)
    with torch.no_grad():
        k[..., 0] = f0  # sneak past the version checker
    fs = [f0]
    for i, (alpha_i, beta_i) in enumerate(zip(tableau.alpha, tableau.beta)):
        ti = t0 + alpha_i * dt
        yi = y0 + k[..., :i + 1].matmul(beta_i * dt).view_as(f0)
        f = func(ti, yi)
        fs.append(f)
        with torch.no_grad():
            k[..., i + 1] = f  # <-- IPL001
    k = _DistributeGradients.apply(k, *fs)  # then fix the gradients we broke

    y1 = yi
    f1 = k[..., -1]
    y1_error = k.matmul(dt * tableau.c_error)
    return y1, f1, y1_error, k


class ODEFunc(nn.Module):
    def __init__(self):
        super(ODEFunc, self).__init__()
        self.net = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 2))

    def forward(self, t, y):
        return self.net(y ** 3) * torch.cos(t)


def main():
    func = ODEFunc()
    y0 = torch.tensor([[2., 0.], [1., -1.]])
    # gradients with respect to the time grid are requested
    t = torch.tensor([0., 0.1, 0.2, 0.3], requires_grad=True)
    y = y0
    f = func(t[0], y)
    for step in range(3):
        dt = t[step + 1] - t[step]
        y, f, y_err, k = _runge_kutta_step(func, y, f, t[step], dt, _BOGACKI_SHAMPINE_TABLEAU)
    loss = (y ** 2).sum() + y_err.abs().sum()
    loss.backward()
    return loss.detach(), t.grad


loss, t_grad = main()
