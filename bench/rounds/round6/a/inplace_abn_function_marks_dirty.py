# label: safe
# why: InPlaceABN overwrites its input with the activated batch-norm output but declares it with ctx.mark_dirty and recovers x_hat from the saved output in backward; the in-place work in backward only touches tensors it just created
# source: https://github.com/mapillary/inplace_abn/blob/01d23bfeafce0aacbeb14cd5a42a9dd8896932fa/inplace_abn/functions.py (the _backend kernels written out in torch, no running stats)
import torch
import torch.autograd as autograd
import torch.nn as nn
from torch.autograd.function import once_differentiable

torch.manual_seed(0)


def _reduce_dims(x):
    return [0] + list(range(2, x.ndimension()))


def _broadcast(t, x):
    return t.view(1, -1, *([1] * (x.ndimension() - 2)))


def _statistics(x):
    dims = _reduce_dims(x)
    mean = x.mean(dim=dims)
    var = x.var(dim=dims, unbiased=False)
    count = torch.tensor([x.numel() // x.size(1)], dtype=torch.long)
    return mean, var, count


class InPlaceABN(autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, running_mean, running_var, training=True, momentum=0.1, eps=1e-05,
                activation_param=0.01):
        ctx.training = training
        ctx.momentum = momentum
        ctx.eps = eps
        ctx.activation_param = activation_param
        ctx.has_running_stats = running_mean is not None and running_var is not None

        mean, var, count = _statistics(x)

        # Transform x: x <- leaky_relu((x - mean) / sqrt(var + eps) * (|weight| + eps) + bias)
        x.sub_(_broadcast(mean, x))
        x.mul_(_broadcast(torch.rsqrt(var + ctx.eps), x))
        x.mul_(_broadcast(weight.abs() + ctx.eps, x))
        x.add_(_broadcast(bias, x))
        torch.nn.functional.leaky_relu_(x, ctx.activation_param)

        # Save for backward and mark dirty tensors
        ctx.save_for_backward(x, var, count, weight, bias)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    @once_differentiable
    def backward(ctx, dy_act):
        y_act, var, count, weight, bias = ctx.saved_tensors

        # backward_reduce: undo the activation on the saved output to recover x_hat
        positive = y_act >= 0
        y = torch.where(positive, y_act, y_act / ctx.activation_param)
        dy = torch.where(positive, dy_act, dy_act * ctx.activation_param)
        xhat = (y - _broadcast(bias, y)) / _broadcast(weight.abs() + ctx.eps, y)
        dims = _reduce_dims(y)
        sum_dy_local = dy.sum(dim=dims)
        sum_xhat_dy_local = (xhat * dy).sum(dim=dims)
        sum_dy, sum_xhat_dy = sum_dy_local, sum_xhat_dy_local

        # Gradient w.r.t. x (backward_train: this overwrites dy with dx)
        n = count.to(dtype=dy.dtype)
        dy.sub_(_broadcast(sum_dy / n, dy))
        dy.sub_(xhat * _broadcast(sum_xhat_dy / n, dy))
        dy.mul_(_broadcast((weight.abs() + ctx.eps) * torch.rsqrt(var + ctx.eps), dy))
        dx = dy

        # Gradient w.r.t. weight
        dweight = sum_xhat_dy_local
        dweight[weight < 0] *= -1

        # Gradient w.r.t. bias
        dbias = sum_dy_local

        return (dx, dweight, dbias) + (None,) * 6


class InPlaceABNModule(nn.Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, activation_param=0.01):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))
        self.eps = eps
        self.momentum = momentum
        self.activation_param = activation_param

    def forward(self, x):
        return InPlaceABN.apply(x, self.weight, self.bias, None, None,
                                self.training, self.momentum, self.eps, self.activation_param)


net = nn.Sequential(
    nn.Conv2d(3, 4, 3, padding=1),
    InPlaceABNModule(4),
    nn.Conv2d(4, 2, 3, padding=1),
)
with torch.no_grad():
    net[1].weight.copy_(torch.tensor([1.0, -0.5, 2.0, 0.7]))
    net[1].bias.copy_(torch.tensor([0.1, -0.2, 0.0, 0.3]))

x = torch.randn(2, 3, 5, 5)
out = net(x)
loss = (out ** 2).mean()
loss.backward()
