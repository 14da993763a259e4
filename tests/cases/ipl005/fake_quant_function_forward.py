# label: hazard silent
# why: a straight-through fake-quantizer's autograd.Function forward clamps and rounds its input in place without ctx.mark_dirty, silently changing the caller's residual tensor.
import torch
import torch.nn as nn


class FakeQuantSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        inside = (x.abs() <= 4 * scale)
        ctx.save_for_backward(inside)
        x.clamp_(-4 * scale, 4 * scale)  # <-- IPL005: input modified without ctx.mark_dirty
        return torch.round(x / scale) * scale

    @staticmethod
    def backward(ctx, grad_output):
        (inside,) = ctx.saved_tensors
        return grad_output * inside, None


class QuantLinearBlock(nn.Module):
    def __init__(self, dim, scale=0.1):
        super().__init__()
        self.fc1 = nn.Linear(dim, dim)
        self.fc2 = nn.Linear(dim, dim)
        self.scale = scale

    def forward(self, x):
        h = self.fc1(x)
        q = FakeQuantSTE.apply(h, self.scale)
        return self.fc2(q) + h


torch.manual_seed(0)
block = QuantLinearBlock(6)
x = torch.randn(4, 6) * 3
y = block(x)
loss = y.pow(2).mean()
loss.backward()
