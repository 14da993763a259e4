# label: safe no-twin
# why: the Function mutates its input in forward but declares it with ctx.mark_dirty, so autograd rebases the caller's tensor correctly
import torch
import torch.nn as nn

torch.manual_seed(0)


class InplaceScale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, s):
        ctx.s = s
        x.mul_(s)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.s, None


fc = nn.Linear(3, 3)
x = torch.randn(2, 3)
h = fc(x)
h = InplaceScale.apply(h, 3.0)
loss = torch.tanh(h).sum()
loss.backward()
