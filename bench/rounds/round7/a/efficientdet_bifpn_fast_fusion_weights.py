# label: safe
# why: BiFPN applies an out-of-place nn.ReLU() to its fusion-weight Parameters and a custom Swish Function that saves only its input, so nothing here writes in place into a leaf or a saved tensor.
# source: https://github.com/zylo117/Yet-Another-EfficientDet-Pytorch/issues/503
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


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
    def forward(self, x):
        return SwishImplementation.apply(x)


class SeparableConvBlock(nn.Module):
    def __init__(self, in_channels):
        super(SeparableConvBlock, self).__init__()
        self.depthwise_conv = nn.Conv2d(in_channels, in_channels, 3, padding=1, groups=in_channels, bias=False)
        self.pointwise_conv = nn.Conv2d(in_channels, in_channels, 1)
        self.bn = nn.BatchNorm2d(in_channels)

    def forward(self, x):
        return self.bn(self.pointwise_conv(self.depthwise_conv(x)))


class BiFPN(nn.Module):
    def __init__(self, num_channels, epsilon=1e-4):
        super(BiFPN, self).__init__()
        self.epsilon = epsilon
        self.conv6_up = SeparableConvBlock(num_channels)
        self.conv7_down = SeparableConvBlock(num_channels)
        self.p7_upsample = nn.Upsample(scale_factor=2, mode='nearest')
        self.p6_downsample = nn.MaxPool2d(3, stride=2, padding=1)
        self.swish = MemoryEfficientSwish()

        self.p6_w1 = nn.Parameter(torch.ones(2, dtype=torch.float32), requires_grad=True)
        self.p6_w1_relu = nn.ReLU()
        self.p7_w2 = nn.Parameter(torch.ones(2, dtype=torch.float32), requires_grad=True)
        self.p7_w2_relu = nn.ReLU()

    def forward(self, inputs):
        p6_in, p7_in = inputs

        p6_w1 = self.p6_w1_relu(self.p6_w1)
        weight = p6_w1 / (torch.sum(p6_w1, dim=0) + self.epsilon)
        p6_up = self.conv6_up(self.swish(weight[0] * p6_in + weight[1] * self.p7_upsample(p7_in)))

        p7_w2 = self.p7_w2_relu(self.p7_w2)
        weight = p7_w2 / (torch.sum(p7_w2, dim=0) + self.epsilon)
        p7_out = self.conv7_down(self.swish(weight[0] * p7_in + weight[1] * self.p6_downsample(p6_up)))
        return p6_up, p7_out


bifpn = nn.Sequential(BiFPN(4), BiFPN(4))
p6 = torch.randn(2, 4, 8, 8)
p7 = torch.randn(2, 4, 4, 4)
p6_out, p7_out = bifpn((p6, p7))
loss = p6_out.pow(2).mean() + p7_out.abs().mean()
loss.backward()
