# label: hazard raises
# why: BiFPN's fast-attention weights are leaf nn.Parameters passed straight through a ReLU module that a memory-saving helper switched to inplace, so relu_ runs on a leaf that requires grad.
# source: https://github.com/pytorch/pytorch/issues/42525
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SeparableConvBlock(nn.Module):
    def __init__(self, in_channels):
        super().__init__()
        self.depthwise_conv = nn.Conv2d(in_channels, in_channels, 3, 1, 1, groups=in_channels, bias=False)
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
        self.p6_upsample = nn.Upsample(scale_factor=2, mode="nearest")
        self.p7_downsample = nn.MaxPool2d(2)
        self.swish = nn.SiLU()
        self.p6_w1 = nn.Parameter(torch.ones(2, dtype=torch.float32), requires_grad=True)
        self.p6_w1_relu = nn.ReLU()
        self.p7_w2 = nn.Parameter(torch.ones(2, dtype=torch.float32), requires_grad=True)
        self.p7_w2_relu = nn.ReLU()

    def forward(self, inputs):
        p6_in, p7_in = inputs
        p6_w1 = self.p6_w1_relu(self.p6_w1)  # <-- IPL003: ReLU module made inplace acts on a leaf Parameter
        weight = p6_w1 / (torch.sum(p6_w1, dim=0) + self.epsilon)
        p6_up = self.conv6_up(self.swish(weight[0] * p6_in + weight[1] * self.p6_upsample(p7_in)))
        p7_w2 = self.p7_w2_relu(self.p7_w2)  # <-- IPL003: ReLU module made inplace acts on a leaf Parameter
        weight = p7_w2 / (torch.sum(p7_w2, dim=0) + self.epsilon)
        p7_out = self.conv7_down(self.swish(weight[0] * p7_in + weight[1] * self.p7_downsample(p6_up)))
        return p6_up, p7_out


class EfficientDetNeck(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 4, 3, 2, 1), nn.ReLU())
        self.down = nn.Sequential(nn.Conv2d(4, 4, 3, 2, 1), nn.ReLU())
        self.bifpn = nn.Sequential(BiFPN(4))
        self._relu_inplace()

    def _relu_inplace(self):
        """make all ReLU inplace to save memory"""
        for m in self.modules():
            if isinstance(m, nn.ReLU):
                m.inplace = True

    def forward(self, x):
        p6 = self.stem(x)
        p7 = self.down(p6)
        return self.bifpn((p6, p7))


model = EfficientDetNeck()
model.train()
img = torch.rand(2, 3, 16, 16)
p6_out, p7_out = model(img)
loss = p6_out.pow(2).mean() + p7_out.pow(2).mean()
loss.backward()
