# label: hazard raises no-twin
# why: the custom Function updates the running-mean buffer in place and marks it dirty but does not return it, which autograd rejects at apply time
# source: https://github.com/pytorch/pytorch/pull/33069
import torch
import torch.nn as nn

torch.manual_seed(0)


class _CenterWithRunningMean(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, running_mean, momentum):
        mean = x.mean(0)
        running_mean.mul_(1 - momentum)  # <-- IPL005: input mutated in forward, marked dirty, not returned
        running_mean.add_(momentum * mean)  # <-- IPL005: input mutated in forward, marked dirty, not returned
        ctx.mark_dirty(running_mean)
        return x - mean

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out - grad_out.mean(0), None, None


class CenteringLayer(nn.Module):
    def __init__(self, dim, momentum=0.1):
        super().__init__()
        self.momentum = momentum
        self.register_buffer("running_mean", torch.zeros(dim))
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.proj(x)
        if self.training:
            return _CenterWithRunningMean.apply(h, self.running_mean, self.momentum)
        return h - self.running_mean


layer = CenteringLayer(3)
x = torch.randn(5, 3)
out = layer(x)
loss = out.pow(2).mean()
loss.backward()
