# label: hazard raises
# why: the custom Function's backward reuses the unpacked saved tensor as scratch space (x.sigmoid_()), which bumps the version of the very tensor that the upstream exp node also saved as its result, so that node's unpack fails.
# source: https://github.com/pytorch/pytorch/pull/60195
import torch
import torch.nn as nn

torch.manual_seed(0)


class MemoryEfficientSigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        sig = x.sigmoid_()  # <-- IPL005: in-place on the unpacked saved tensor inside backward
        return grad_output * sig * (1 - sig)


class GatedScale(nn.Module):
    def __init__(self, dim=6):
        super().__init__()
        self.log_scale = nn.Parameter(torch.zeros(dim))
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        scale = self.log_scale.exp()
        gate = MemoryEfficientSigmoid.apply(scale)
        return self.proj(x) * gate


model = GatedScale()
x = torch.randn(4, 6)
out = model(x)
loss = out.pow(2).mean()
loss.backward()
grad = model.log_scale.grad
