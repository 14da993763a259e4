# label: safe
# why: the fix clones y_act and dy_act at the top of InPlaceABN.backward, so the in-place activation inversion only touches private copies and the residual branch still receives the untouched grad_output.
# source: https://github.com/mapillary/inplace_abn/issues/155 (fix: mapillary/inplace_abn@fd332f2 "Avoid overwriting y and dy in the backward pass")
import torch
import torch.nn as nn
from torch import autograd

torch.manual_seed(0)


def _reduce(t):
    return t.sum(dim=(0, 2, 3))


def _bc(t):
    return t.view(1, -1, 1, 1)


class _backend:
    @staticmethod
    def backward_reduce(y_act, dy_act, weight, bias, eps, activation, activation_param):
        # invert leaky_relu on the output and its gradient (the native kernel works in place)
        scale = torch.where(y_act < 0, torch.full_like(y_act, activation_param), torch.ones_like(y_act))
        dy_act.mul_(scale)
        y_act.div_(scale)
        xhat = (y_act - _bc(bias)) / _bc(weight.abs() + eps)
        return y_act, dy_act, _reduce(dy_act), _reduce(xhat * dy_act)

    @staticmethod
    def backward(y_act, dy_act, var, count, sum_dy, sum_xhat_dy, weight, bias, eps):
        xhat = (y_act - _bc(bias)) / _bc(weight.abs() + eps)
        invstd = 1.0 / torch.sqrt(var + eps)
        return (dy_act - _bc(sum_dy) / count - xhat * _bc(sum_xhat_dy) / count) * _bc((weight.abs() + eps) * invstd)


class InPlaceABN(autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, eps, activation, activation_param):
        ctx.eps, ctx.activation, ctx.activation_param = eps, activation, activation_param
        count = x.numel() // x.size(1)
        mean = _reduce(x) / count
        var = _reduce((x - _bc(mean)) ** 2) / count
        y = (x - _bc(mean)) / torch.sqrt(_bc(var) + eps) * _bc(weight.abs() + eps) + _bc(bias)
        y_act = torch.nn.functional.leaky_relu(y, activation_param)
        ctx.save_for_backward(y_act, var, torch.tensor(float(count)), weight, bias)
        return y_act

    @staticmethod
    @autograd.function.once_differentiable
    def backward(ctx, dy_act):
        y_act, var, count, weight, bias = ctx.saved_tensors

        # Create clones of y_act and dy_act, as the backend will modify them in-place
        y_act, dy_act = y_act.clone(), dy_act.clone()

        y, dy, sum_dy, sum_xhat_dy = _backend.backward_reduce(
            y_act, dy_act, weight, bias, ctx.eps, ctx.activation, ctx.activation_param)
        dx = _backend.backward(y, dy, var, count, sum_dy, sum_xhat_dy, weight, bias, ctx.eps)
        dweight = sum_xhat_dy * torch.sign(weight)
        dbias = sum_dy
        return dx, dweight, dbias, None, None, None


class ABN(nn.Module):
    def __init__(self, num_features, eps=1e-5, activation_param=0.01):
        super().__init__()
        self.eps, self.activation_param = eps, activation_param
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))

    def forward(self, x):
        return InPlaceABN.apply(x, self.weight, self.bias, self.eps, "leaky_relu", self.activation_param)


class ResidualBlock(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.downsample = nn.Conv2d(cin, cout, 1, bias=False)
        self.conv = nn.Conv2d(cin, cout, 3, padding=1, bias=False)
        self.bn = ABN(cout)

    def forward(self, x):
        identity = self.downsample(x)
        out = self.bn(self.conv(x))
        return out + identity


def main():
    block = ResidualBlock(3, 4)
    x = torch.randn(2, 3, 6, 6)
    w = torch.randn(1, 4, 6, 6)
    loss = (block(x) * w).sum()
    loss.backward()
    return block.downsample.weight.grad.clone(), block.conv.weight.grad.clone()


g_down, g_conv = main()
