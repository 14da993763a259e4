# label: hazard raises
# why: backward rescales a saved tensor in place; the same tensor is saved by an earlier mul whose backward runs afterwards and fails the version check
import torch


class ScaledSquare(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return scale * x * x

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        x.mul_(2.0 * ctx.scale)  # <-- IPL005
        return grad_output * x, None


torch.manual_seed(0)
a = torch.randn(4, 3, requires_grad=True)
gain = torch.randn(4, 3, requires_grad=True)

x = a * 1.5
gated = x * gain                    # saves x, backward runs after ScaledSquare's
sq = ScaledSquare.apply(x, 0.25)
loss = (gated + sq).sum()
loss.backward()

a_grad = a.grad
gain_grad = gain.grad
