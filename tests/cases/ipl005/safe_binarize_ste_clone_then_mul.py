# label: safe
# why: the straight-through binarizer clones grad_output and applies the mask to that copy, so the expanded gradient coming from the sum-pool is untouched.
import torch
import torch.nn as nn

torch.manual_seed(0)


class BinarizeSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sign(x)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input.mul_((x.abs() <= 1).to(grad_input.dtype))
        return grad_input


proj = nn.Linear(10, 16)
head = nn.Linear(16, 3)
x = torch.randn(4, 7, 10)
codes = BinarizeSTE.apply(proj(x))
pooled = codes.sum(dim=1)
loss = head(pooled).pow(2).mean()
loss.backward()
