# label: safe
# why: backward clones grad_output before scaling it in place, so the sibling branch that shares the same grad tensor is unaffected
import torch


class GradAmplify(torch.autograd.Function):
    """Identity in forward, amplifies the gradient in backward."""

    @staticmethod
    def forward(ctx, x, factor):
        ctx.factor = factor
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        grad = grad_output.clone()
        grad.mul_(ctx.factor)
        return grad, None


torch.manual_seed(0)
inp = torch.randn(4, 6, requires_grad=True)
proj = torch.nn.Linear(6, 6)
w_out = torch.randn(4, 6)

h = torch.tanh(proj(inp))
skip = h * 0.5
amp = GradAmplify.apply(h, 3.0)
out = skip + amp
loss = (out * w_out).sum()
loss.backward()

inp_grad = inp.grad.clone()
weight_grad = proj.weight.grad.clone()
