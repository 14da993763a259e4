# label: safe
# why: backward builds a fresh tensor from grad_output (out of place) and only then applies in-place ops to that new tensor
import torch
import torch.nn as nn

torch.manual_seed(0)


class ClipGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, bound):
        ctx.bound = bound
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        g = grad_output * 1.0
        g.clamp_(-ctx.bound, ctx.bound)
        return g, None


fc = nn.Linear(4, 4)
x = torch.randn(3, 4)
h = fc(x)
y = ClipGrad.apply(h, 0.5)
loss = (y * 3.0).sum() + h.pow(2).sum()
loss.backward()
