# label: hazard silent
# why: FusedBiasLeakyReLU.forward adds the bias and activates in place on its input without mark_dirty, so the caller's pre-activation used for the skip term is silently replaced.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class FusedBiasLeakyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, bias, slope):
        x.add_(bias)  # <-- IPL005: input mutated without ctx.mark_dirty
        out = F.leaky_relu(x, slope)
        ctx.save_for_backward(out)
        ctx.slope = slope
        return out

    @staticmethod
    def backward(ctx, grad_output):
        out, = ctx.saved_tensors
        scale = torch.where(out > 0, torch.ones_like(out), torch.full_like(out, ctx.slope))
        grad_x = grad_output * scale
        return grad_x, grad_x.sum(0), None


fc = nn.Linear(6, 6, bias=False)
bias = nn.Parameter(torch.randn(6))
head = nn.Linear(6, 2)
x = torch.randn(10, 6)
pre = fc(x)
act = FusedBiasLeakyReLU.apply(pre, bias, 0.2)
y = head(act + 0.5 * pre)
loss = y.pow(2).mean()
loss.backward()
