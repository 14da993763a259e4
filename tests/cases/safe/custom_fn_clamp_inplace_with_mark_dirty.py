# label: safe
# why: the custom forward clamps its input in place but declares it with ctx.mark_dirty and saves only a boolean mask, and the input is a linear output nobody saved.
import torch
import torch.nn as nn

torch.manual_seed(0)


class HardTanhInplace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        inside = (x > -1) & (x < 1)
        x.clamp_(-1, 1)
        ctx.mark_dirty(x)
        ctx.save_for_backward(inside)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        (inside,) = ctx.saved_tensors
        return grad_output * inside.to(grad_output.dtype)


fc1 = nn.Linear(4, 6)
fc2 = nn.Linear(6, 2)
x = torch.randn(3, 4) * 3

h = HardTanhInplace.apply(fc1(x))
out = fc2(h)
loss = out.pow(2).sum()
loss.backward()
grad_fc1 = fc1.weight.grad
