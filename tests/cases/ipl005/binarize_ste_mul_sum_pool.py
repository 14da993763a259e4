# label: hazard raises
# why: the straight-through binarizer multiplies grad_output in place, but the grad of the following sum-pool is an expanded tensor, so the in-place mul_ raises.
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
        grad_output.mul_((x.abs() <= 1).to(grad_output.dtype))  # <-- IPL005: grad_output written in place
        return grad_output


proj = nn.Linear(10, 16)
head = nn.Linear(16, 3)
x = torch.randn(4, 7, 10)
codes = BinarizeSTE.apply(proj(x))
pooled = codes.sum(dim=1)
loss = head(pooled).pow(2).mean()
loss.backward()
