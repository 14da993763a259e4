# label: safe
# why: ClampInplace.forward mutates its input but declares it with ctx.mark_dirty and returns it, and the input is a linear output nothing else saved or reads.
import torch
import torch.nn as nn

torch.manual_seed(0)


class ClampInplace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lo, hi):
        mask = (x >= lo) & (x <= hi)
        ctx.save_for_backward(mask)
        x.clamp_(lo, hi)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        mask, = ctx.saved_tensors
        return grad_output * mask, None, None


fc = nn.Linear(8, 8)
out_fc = nn.Linear(8, 2)
x = torch.randn(6, 8)
h = ClampInplace.apply(fc(x), -0.5, 0.5)
loss = out_fc(torch.tanh(h)).pow(2).mean()
loss.backward()
