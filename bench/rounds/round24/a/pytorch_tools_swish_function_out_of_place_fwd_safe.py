# label: safe
# why: after the fix swish_jit_fwd computes x.mul(torch.sigmoid(x)) out of place, so the x that SwishFunction saved for backward (and the caller's BatchNorm output) is left untouched.
# source: https://github.com/bonlime/pytorch-tools/commit/655d6ea1bd975f83ffd0d9e38c88e69d23bddee6
import torch
from torch import nn

torch.manual_seed(0)


def swish_jit_fwd(x):
    return x.mul(torch.sigmoid(x))


def swish_jit_bwd(x, grad_output):
    x_sigmoid = torch.sigmoid(x)
    return grad_output * (x_sigmoid * (1 + x * (1 - x_sigmoid)))


class SwishFunction(torch.autograd.Function):
    """ torch.jit.script optimised Swish
    Inspired by conversation btw Jeremy Howard & Adam Pazske
    """

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return swish_jit_fwd(x)

    @staticmethod
    def backward(ctx, grad_output):
        x = ctx.saved_tensors[0]
        return swish_jit_bwd(x, grad_output)


class Swish(nn.Module):
    """Memory efficient and fast version of Swish. CAN NOT be exported by tracing"""

    def __init__(self, inplace=False):
        super().__init__()

    def forward(self, x):
        return SwishFunction.apply(x)


class ABN(nn.Module):
    """BatchNorm + activation, as used by the EfficientNet encoder."""

    def __init__(self, num_features):
        super().__init__()
        self.bn = nn.BatchNorm2d(num_features)
        self.act = Swish()

    def forward(self, x):
        return self.act(self.bn(x))


class MBConvStem(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_stem = nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False)
        self.bn1 = ABN(8)
        self.conv_pw = nn.Conv2d(8, 4, 1, bias=False)

    def forward(self, x):
        return self.conv_pw(self.bn1(self.conv_stem(x)))


def main():
    model = MBConvStem()
    images = torch.randn(2, 3, 16, 16)
    out = model(images)
    loss = out.pow(2).mean()
    loss.backward()
    return out.detach(), model.conv_stem.weight.grad


out, stem_grad = main()
