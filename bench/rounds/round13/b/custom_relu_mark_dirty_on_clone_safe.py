# label: safe
# why: the custom Function rewrites its input in place but declares it with ctx.mark_dirty and is applied to a clone, so autograd rebases the graph correctly
# source: https://github.com/pytorch/pytorch/issues/90209
import torch

torch.manual_seed(0)


class MyRelu(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        result = x.relu_()
        ctx.mark_dirty(result)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        return grad_output * (result > 0).to(grad_output.dtype)


def main(z, w):
    x = z.clone()
    y = MyRelu.apply(x)
    return y, (y * w).sum()


z = torch.randn(6, requires_grad=True)
w = torch.randn(6, requires_grad=True)
y, out = main(z, w)
out.backward()
