# label: hazard raises no-twin
# why: the deep-supervision branch convolves `out`, then mod7's first IdentityResidualBlock normalises the same tensor in place with InPlaceABN (mark_dirty), overwriting the input the dsn conv saved for backward
# source: https://github.com/mapillary/inplace_abn/issues/46
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import autograd

torch.manual_seed(0)


class InPlaceABNFunction(autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, running_mean, running_var, momentum=0.1, eps=1e-05, slope=0.01):
        ctx.slope = slope
        ctx.eps = eps
        mean = x.mean(dim=(0, 2, 3))
        var = x.var(dim=(0, 2, 3), unbiased=False)
        running_mean.mul_(1 - momentum).add_(momentum * mean)
        running_var.mul_(1 - momentum).add_(momentum * var)
        ctx.mark_dirty(x, running_mean, running_var)
        x.sub_(mean[None, :, None, None]).div_(torch.sqrt(var + eps)[None, :, None, None])
        x.mul_(weight[None, :, None, None]).add_(bias[None, :, None, None])
        x.copy_(F.leaky_relu(x, slope))
        ctx.save_for_backward(x, var, weight, bias)
        return x, running_mean, running_var

    @staticmethod
    def backward(ctx, dz, _drm, _drv):
        z, var, weight, bias = ctx.saved_tensors
        y = torch.where(z >= 0, z, z / ctx.slope)
        dy = torch.where(z >= 0, dz, dz * ctx.slope)
        xhat = (y - bias[None, :, None, None]) / weight[None, :, None, None]
        dweight = (dy * xhat).sum(dim=(0, 2, 3))
        dbias = dy.sum(dim=(0, 2, 3))
        dxhat = dy * weight[None, :, None, None]
        std = torch.sqrt(var + ctx.eps)[None, :, None, None]
        dx = (dxhat - dxhat.mean(dim=(0, 2, 3), keepdim=True)
              - xhat * (dxhat * xhat).mean(dim=(0, 2, 3), keepdim=True)) / std
        return dx, dweight, dbias, None, None, None, None, None


class InPlaceABN(nn.Module):
    def __init__(self, num_features, slope=0.01):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))
        self.register_buffer('running_mean', torch.zeros(num_features))
        self.register_buffer('running_var', torch.ones(num_features))
        self.slope = slope

    def forward(self, x):
        return InPlaceABNFunction.apply(x, self.weight, self.bias, self.running_mean, self.running_var,
                                        0.1, 1e-05, self.slope)[0]


class IdentityResidualBlock(nn.Module):
    def __init__(self, in_channels, channels, stride=1, norm_act=InPlaceABN):
        super().__init__()
        need_proj_conv = stride != 1 or in_channels != channels[-1]
        self.bn1 = norm_act(in_channels)
        self.convs = nn.Sequential(OrderedDict([
            ("conv1", nn.Conv2d(in_channels, channels[0], 3, stride=stride, padding=1, bias=False)),
            ("bn2", norm_act(channels[0])),
            ("conv2", nn.Conv2d(channels[0], channels[1], 3, stride=1, padding=1, bias=False)),
        ]))
        if need_proj_conv:
            self.proj_conv = nn.Conv2d(in_channels, channels[-1], 1, stride=stride, padding=0, bias=False)

    def forward(self, x):
        if hasattr(self, "proj_conv"):
            bn1 = self.bn1(x)  # <-- IPL001: InPlaceABN overwrites x, which the dsn branch's conv saved
            shortcut = self.proj_conv(bn1)
        else:
            shortcut = x.clone()
            bn1 = self.bn1(x)
        out = self.convs(bn1)
        out.add_(shortcut)
        return out


class ResNet38DSN(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.mod1 = nn.Sequential(OrderedDict([("conv1", nn.Conv2d(3, 8, 3, stride=1, padding=1, bias=False))]))
        self.pool2 = nn.MaxPool2d(3, stride=2, padding=1)
        self.mod2 = nn.Sequential(OrderedDict([("block1", IdentityResidualBlock(8, (8, 8)))]))
        self.mod6 = nn.Sequential(OrderedDict([("block1", IdentityResidualBlock(8, (16, 16)))]))
        self.dsn = nn.Sequential(nn.Conv2d(16, 8, 3, padding=1), nn.Conv2d(8, num_classes, 1))
        self.mod7 = nn.Sequential(OrderedDict([("block1", IdentityResidualBlock(16, (16, 32)))]))
        self.bn_out = InPlaceABN(32)
        self.cls = nn.Conv2d(32, num_classes, 1)

    def forward(self, img):
        out = self.mod1(img)
        out = self.mod2(self.pool2(out))
        out = self.mod6(out)
        out_dsn = self.dsn(out)
        out = self.mod7(out)
        out = self.bn_out(out)
        out = self.cls(out)
        return [out_dsn, out]


model = ResNet38DSN()
images = torch.randn(2, 3, 8, 8)
labels = torch.randint(0, 3, (2, 4, 4))
out_dsn, out = model(images)
loss = F.cross_entropy(out, labels) + 0.4 * F.cross_entropy(out_dsn, labels)
loss.backward()
