# label: safe
# why: as in torchdiffeq's odenet_mnist head, the in-place ReLU follows a GroupNorm layer, so it rewrites the norm's fresh output rather than the solution saved by OdeintAdjointMethod.
# source: https://github.com/rtqichen/torchdiffeq/issues/72  (fc head layout of examples/odenet_mnist.py)
import torch
import torch.nn as nn

torch.manual_seed(0)


def _flatten(sequence):
    flat = [p.contiguous().view(-1) for p in sequence]
    return torch.cat(flat) if len(flat) > 0 else torch.tensor([])


def odeint(func, y0, t, n_sub=4):
    ys = [y0]
    y = y0
    for i in range(len(t) - 1):
        dt = (t[i + 1] - t[i]) / n_sub
        for k in range(n_sub):
            tk = t[i] + k * dt
            k1 = func(tk, y)
            k2 = func(tk + dt / 2, y + dt / 2 * k1)
            k3 = func(tk + dt / 2, y + dt / 2 * k2)
            k4 = func(tk + dt, y + dt * k3)
            y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        ys.append(y)
    return torch.stack(ys)


class OdeintAdjointMethod(torch.autograd.Function):
    @staticmethod
    def forward(ctx, y0, func, t, flat_params):
        ctx.func = func
        with torch.no_grad():
            ans = odeint(func, y0, t)
        ctx.save_for_backward(t, flat_params, y0, ans)
        return ans

    @staticmethod
    def backward(ctx, grad_output):
        t, flat_params, y0, ans = ctx.saved_tensors
        func = ctx.func
        params = tuple(func.parameters())
        with torch.enable_grad():
            y0_ = y0.detach().requires_grad_(True)
            ans_ = odeint(func, y0_, t)
            grads = torch.autograd.grad(ans_, (y0_,) + params, grad_output, allow_unused=True)
        grad_y0 = grads[0]
        grad_params = _flatten([g if g is not None else torch.zeros_like(p) for g, p in zip(grads[1:], params)])
        return grad_y0, None, None, grad_params


def odeint_adjoint(func, y0, t):
    flat_params = _flatten(func.parameters())
    return OdeintAdjointMethod.apply(y0, func, t, flat_params)


class ConcatLinear(nn.Module):
    def __init__(self, dim_in, dim_out, use_bias=True):
        super(ConcatLinear, self).__init__()
        self._layer = nn.Linear(dim_in + 1, dim_out, bias=use_bias)

    def forward(self, t, x):
        tt = torch.ones_like(x[:, :1]) * t
        ttx = torch.cat([tt, x], 1)
        return self._layer(ttx)


class ODEfunc(nn.Module):
    def __init__(self, dim):
        super(ODEfunc, self).__init__()
        self.fc1 = ConcatLinear(dim, 16)
        self.fc2 = ConcatLinear(16, dim)

    def forward(self, t, x):
        return self.fc2(t, torch.tanh(self.fc1(t, x)))


class ODEBlock(nn.Module):
    def __init__(self, odefunc):
        super(ODEBlock, self).__init__()
        self.odefunc = odefunc
        self.integration_time = torch.tensor([0, 1]).float()

    def forward(self, x):
        out = odeint_adjoint(self.odefunc, x, self.integration_time)
        return out[1]


def main():
    model = nn.Sequential(
        ODEBlock(ODEfunc(2)),
        nn.GroupNorm(1, 2),
        nn.ReLU(inplace=True),
        nn.Linear(2, 2),
    )
    x = torch.randn(115, 2)
    y = (x[:, 0] * x[:, 1] > 0).long()
    logits = model(x)
    loss = nn.functional.cross_entropy(logits, y)
    loss.backward()
    return loss.detach(), model[0].odefunc.fc1._layer.weight.grad


loss_value, odefunc_grad = main()
