# label: hazard silent
# why: the custom Swish backward scales grad_output in place, but the residual add passed the same gradient tensor to the skip branch, so the skip path gets a corrupted gradient.
import torch
import torch.nn as nn


class SwishImplementation(torch.autograd.Function):
    @staticmethod
    def forward(ctx, i):
        ctx.save_for_backward(i)
        return i * torch.sigmoid(i)

    @staticmethod
    def backward(ctx, grad_output):
        (i,) = ctx.saved_tensors
        sigmoid_i = torch.sigmoid(i)
        return grad_output.mul_(sigmoid_i * (1 + i * (1 - sigmoid_i)))  # <-- IPL005


class MemoryEfficientSwish(nn.Module):
    def forward(self, x):
        return SwishImplementation.apply(x)


class MBConvLite(nn.Module):
    def __init__(self, channels, expand=2):
        super().__init__()
        hidden = channels * expand
        self.expand = nn.Conv2d(channels, hidden, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(hidden)
        self.act = MemoryEfficientSwish()
        self.project = nn.Conv2d(hidden, channels, 1, bias=False)

    def forward(self, x):
        h = self.act(self.bn1(self.expand(x)))
        return self.project(h) + x


torch.manual_seed(0)
block = MBConvLite(channels=3)
x = torch.randn(2, 3, 4, 4, requires_grad=True)
stem_out = x * 1.0
y = block.act(stem_out) + stem_out
out = block(y)
loss = out.sum()
loss.backward()
