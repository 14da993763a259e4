# label: safe
# why: forward edits its input in place but declares it with ctx.mark_dirty and returns it, and the input is not saved by any earlier op
import torch


class AddBiasInplace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, bias):
        x.add_(bias)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, grad_output.sum(dim=0)


torch.manual_seed(0)
inp = torch.randn(6, 4, requires_grad=True)
w = torch.randn(4, 4, requires_grad=True)
bias = torch.randn(4, requires_grad=True)

h = inp @ w                   # matmul saves inp and w, not h
h = AddBiasInplace.apply(h, bias)
out = torch.sigmoid(h)
loss = out.mean()
loss.backward()

inp_grad = inp.grad
w_grad = w.grad
bias_grad = bias.grad
