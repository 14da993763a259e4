# label: hazard silent
# why: the straight-through sign estimator calls abs_() on the tensor from ctx.saved_tensors, which is the caller's own input, so the caller's tensor changes during backward.
import torch

torch.manual_seed(0)


class SignSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sign(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        mag = x.abs_()  # <-- IPL005
        return grad_output * (mag <= 1).to(grad_output.dtype)


w = torch.randn(4, 3, requires_grad=True)
x = torch.randn(2, 4)

pre = x @ w
codes = SignSTE.apply(pre)
loss = (codes * torch.tensor([1.0, -2.0, 0.5])).sum()
loss.backward()

# reuse the pre-activations for a regulariser after the backward pass
reg = pre.detach().pow(2).mean()
grad_w = w.grad
