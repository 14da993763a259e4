# label: safe
# why: the tutorial MyReLU clones grad_output before zeroing entries, and forward returns a new tensor instead of mutating its input.
import torch
from torch import nn


torch.manual_seed(0)


class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input < 0] = 0
        return grad_input


class GradMultiply(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.scale, None


fc1 = nn.Linear(5, 7)
fc2 = nn.Linear(7, 7)
bias_branch = nn.Linear(5, 7)
x = torch.randn(4, 5)
skip = bias_branch(x)
hidden = MyReLU.apply(fc1(x))
out = GradMultiply.apply(fc2(hidden), 0.5) + skip
out.sum().backward()
