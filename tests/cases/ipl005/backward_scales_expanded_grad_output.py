# label: hazard raises
# why: backward multiplies grad_output in place; after .sum() the incoming gradient is an expanded (stride-0) tensor that cannot be written
import torch
import torch.nn as nn

torch.manual_seed(0)


class ScaleGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        grad_output.mul_(ctx.scale)  # <-- IPL005
        return grad_output, None


layer = nn.Linear(4, 3)
x = torch.randn(2, 4)
y = ScaleGrad.apply(layer(x), 0.1)
loss = y.sum()
loss.backward()
