# label: hazard raises
# why: the fusion weights are normalised with `w1 /= ...` on the output of nn.ReLU, which ReLU saved for its backward, so loss.backward() fails
# source: https://github.com/tristandb/EfficientDet-PyTorch/issues/7
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DepthwiseConvBlock(nn.Module):
    def __init__(self, in_channels, out_channels):
        super(DepthwiseConvBlock, self).__init__()
        self.depthwise = nn.Conv2d(in_channels, in_channels, 1, groups=in_channels, bias=False)
        self.pointwise = nn.Conv2d(in_channels, out_channels, 1, bias=False)
        self.bn = nn.BatchNorm2d(out_channels, momentum=0.9997, eps=4e-5)
        self.act = nn.ReLU()

    def forward(self, inputs):
        x = self.depthwise(inputs)
        x = self.pointwise(x)
        x = self.bn(x)
        return self.act(x)


class BiFPNBlock(nn.Module):
    def __init__(self, feature_size=4, epsilon=0.0001):
        super(BiFPNBlock, self).__init__()
        self.epsilon = epsilon
        self.p3_td = DepthwiseConvBlock(feature_size, feature_size)
        self.p4_td = DepthwiseConvBlock(feature_size, feature_size)
        self.p4_out = DepthwiseConvBlock(feature_size, feature_size)
        self.w1 = nn.Parameter(torch.rand(2, 2))
        self.w1_relu = nn.ReLU()
        self.w2 = nn.Parameter(torch.rand(3, 2))
        self.w2_relu = nn.ReLU()

    def forward(self, inputs):
        p3_x, p4_x, p5_x = inputs

        # Calculate Top-Down Pathway
        w1 = self.w1_relu(self.w1)
        w1 /= torch.sum(w1, dim=0) + self.epsilon  # <-- IPL001: divides the ReLU output that ReLU saved for backward
        w2 = self.w2_relu(self.w2)
        w2 /= torch.sum(w2, dim=0) + self.epsilon  # <-- IPL001: same for the bottom-up weights

        p4_td = self.p4_td(w1[0, 0] * p4_x + w1[1, 0] * F.interpolate(p5_x, scale_factor=2))
        p3_td = self.p3_td(w1[0, 1] * p3_x + w1[1, 1] * F.interpolate(p4_td, scale_factor=2))

        # Calculate Bottom-Up Pathway
        p3_out = p3_td
        p4_out = self.p4_out(w2[0, 0] * p4_x + w2[1, 0] * p4_td + w2[2, 0] * F.avg_pool2d(p3_out, 2))
        return [p3_out, p4_out, p5_x]


bifpn = nn.Sequential(BiFPNBlock(4), BiFPNBlock(4))
features = [torch.randn(2, 4, 8, 8), torch.randn(2, 4, 4, 4), torch.randn(2, 4, 2, 2)]
outs = bifpn(features)
loss = sum(o.pow(2).mean() for o in outs)
loss.backward()
