# label: hazard silent
# why: AddBackward hands the same gradient tensor to both summands; the custom backward scales it in place, so the skip branch also gets the scaled gradient
import torch
import torch.nn as nn

torch.manual_seed(0)


class GradScale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, factor):
        ctx.factor = factor
        return x.clone()

    @staticmethod
    def backward(ctx, grad_output):
        grad_output.mul_(ctx.factor)  # <-- IPL005
        return grad_output, None


class ScaledBranch(nn.Module):
    def __init__(self):
        super().__init__()
        self.skip = nn.Linear(4, 4)
        self.branch = nn.Linear(4, 4)

    def forward(self, h):
        return self.skip(h) + GradScale.apply(self.branch(h), 0.1)


model = ScaledBranch()
x = torch.randn(3, 4, requires_grad=True)
out = model(x)
loss = out.pow(2).sum()
loss.backward()
