# label: hazard silent
# why: MaskedLinear.backward applies the pruning mask to the saved weight in place, which is the layer's parameter itself, so backward silently prunes the model.
import torch
import torch.nn as nn

torch.manual_seed(0)


class MaskedLinearFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, mask):
        ctx.save_for_backward(x, weight, mask)
        return x @ (weight * mask).t()

    @staticmethod
    def backward(ctx, grad_output):
        x, weight, mask = ctx.saved_tensors
        weight.mul_(mask)  # <-- IPL005: saved tensor (the parameter) written in place
        grad_x = grad_output @ weight
        grad_w = (grad_output.t() @ x) * mask
        return grad_x, grad_w, None


class MaskedLinear(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n_out, n_in) * 0.3)
        self.register_buffer("mask", (torch.rand(n_out, n_in) > 0.5).float())

    def forward(self, x):
        return MaskedLinearFn.apply(x, self.weight, self.mask)


layer = MaskedLinear(6, 4)
x = torch.randn(5, 6, requires_grad=True)
loss = layer(x).pow(2).mean()
loss.backward()
# a dense export of the weights after the step (mask is applied only at inference)
dense_norm = layer.weight.detach().norm()
