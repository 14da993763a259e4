# label: hazard silent
# why: AddBackward hands the same grad tensor to both branches; backward's in-place mul_ on grad_output corrupts the sibling branch's gradient
import torch


class GradAmplify(torch.autograd.Function):
    """Identity in forward, amplifies the gradient in backward."""

    @staticmethod
    def forward(ctx, x, factor):
        ctx.factor = factor
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        grad_output.mul_(ctx.factor)  # <-- IPL005
        return grad_output, None


torch.manual_seed(0)
inp = torch.randn(4, 6, requires_grad=True)
proj = torch.nn.Linear(6, 6)
w_out = torch.randn(4, 6)

h = torch.tanh(proj(inp))
skip = h * 0.5                      # created first -> its backward runs last
amp = GradAmplify.apply(h, 3.0)     # created later -> its backward runs first
out = skip + amp
loss = (out * w_out).sum()
loss.backward()

inp_grad = inp.grad.clone()
weight_grad = proj.weight.grad.clone()
