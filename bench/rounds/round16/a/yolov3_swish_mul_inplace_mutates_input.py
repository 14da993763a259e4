# label: hazard silent
# why: Swish.forward multiplies its argument in place, so the tensor the caller passes in (and later feeds to MemoryEfficientSwish for comparison) is overwritten.
# source: https://github.com/ultralytics/yolov3/issues/441
import torch
import torch.nn as nn

torch.manual_seed(0)


class Swish(nn.Module):
    def __init__(self):
        super(Swish, self).__init__()

    def forward(self, x):
        return x.mul_(torch.sigmoid(x))  # <-- IPL004: mutates the caller's tensor


class SwishImplementation(torch.autograd.Function):
    @staticmethod
    def forward(ctx, i):
        result = i * torch.sigmoid(i)
        ctx.save_for_backward(i)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        i = ctx.saved_tensors[0]
        sigmoid_i = torch.sigmoid(i)
        return grad_output * (sigmoid_i * (1 + i * (1 - sigmoid_i)))


class MemoryEfficientSwish(nn.Module):
    def __init__(self):
        super(MemoryEfficientSwish, self).__init__()

    def forward(self, x):
        return SwishImplementation.apply(x)


f1 = Swish()
f2 = MemoryEfficientSwish()

x = torch.linspace(-5, 5, 11)
y1 = f1(x)
y2 = f2(x)
difference = (y1 - y2).abs().max()
