# label: hazard silent
# why: FastReLU.forward clamps its input in place without ctx.mark_dirty, so the pre-activation the caller reuses is silently overwritten.
import torch
from torch import nn
from torch.autograd import Function

torch.manual_seed(0)


class FastReLU(Function):
    @staticmethod
    def forward(ctx, x):
        x.clamp_(min=0)  # <-- IPL005: input modified without ctx.mark_dirty
        ctx.save_for_backward(x)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        (out,) = ctx.saved_tensors
        return grad_output * (out > 0).to(grad_output.dtype)


class GatedBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.skip_weight = nn.Parameter(torch.full((dim,), 0.5))

    def forward(self, x):
        pre = self.fc(x)
        act = FastReLU.apply(pre)
        return act + self.skip_weight * pre


block = GatedBlock(6)
inputs = torch.randn(4, 6)
outputs = block(inputs)
outputs.sum().backward()
