# label: hazard silent
# why: the custom backward masks grad_output in place, but AddBackward hands the very same gradient tensor to the skip branch, which then sees the masked gradient.
import torch
import torch.nn as nn

torch.manual_seed(0)


class GradClipMask(torch.autograd.Function):
    """Identity in forward; zeroes gradients for activations outside [-1, 1]."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clone()

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        keep = (x.abs() <= 1.0).to(grad_output.dtype)
        grad_output.mul_(keep)  # <-- IPL005
        return grad_output


proj = nn.Linear(4, 4)
skip_w = torch.randn(4, 4, requires_grad=True)
x = torch.randn(3, 4) * 2

skip = x @ skip_w
h = GradClipMask.apply(proj(x))
out = h + skip
loss = (out * torch.linspace(0.5, 1.5, 4)).sum()
loss.backward()

grad_skip_w = skip_w.grad
grad_proj_w = proj.weight.grad
