# label: hazard raises
# why: after swapping BatchNorm for InPlaceABN (a custom Function that saves its own output), the ResNet block still applies nn.ReLU(inplace=True) to that output, a second in-place op on a tensor saved for InPlaceABN's backward
# source: https://github.com/mapillary/inplace_abn/issues/149
import torch
import torch.nn as nn
import torch.autograd as autograd
from torch.autograd.function import once_differentiable

torch.manual_seed(0)


class InPlaceABNFunction(autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, running_mean, running_var, training=True, momentum=0.1, eps=1e-05):
        ctx.training = training
        ctx.momentum = momentum
        ctx.eps = eps
        if ctx.training:
            mean = x.mean(dim=(0, 2, 3))
            var = x.var(dim=(0, 2, 3), unbiased=False)
            count = x.numel() // x.size(1)
            # Update running stats
            running_mean.mul_((1 - ctx.momentum)).add_(ctx.momentum * mean)
            running_var.mul_((1 - ctx.momentum)).add_(ctx.momentum * var * count / (count - 1))
        else:
            mean, var = running_mean, running_var
        ctx.mark_dirty(x)
        std = torch.sqrt(var + eps)
        x.sub_(mean[None, :, None, None]).div_(std[None, :, None, None])
        x.mul_(weight[None, :, None, None]).add_(bias[None, :, None, None])
        ctx.save_for_backward(x, std, weight, bias)
        return x

    @staticmethod
    @once_differentiable
    def backward(ctx, dz):
        z, std, weight, bias = ctx.saved_tensors
        xhat = (z - bias[None, :, None, None]) / weight[None, :, None, None]
        dbias = dz.sum(dim=(0, 2, 3))
        dweight = (dz * xhat).sum(dim=(0, 2, 3))
        count = dz.numel() // dz.size(1)
        dxhat = dz * weight[None, :, None, None]
        dx = (dxhat - dxhat.sum(dim=(0, 2, 3), keepdim=True) / count
              - xhat * (dxhat * xhat).sum(dim=(0, 2, 3), keepdim=True) / count) / std[None, :, None, None]
        return dx, dweight, dbias, None, None, None, None, None


class InPlaceABN(nn.Module):
    def __init__(self, num_features, momentum=0.1, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))
        self.register_buffer('running_mean', torch.zeros(num_features))
        self.register_buffer('running_var', torch.ones(num_features))
        self.momentum = momentum
        self.eps = eps

    def forward(self, x):
        return InPlaceABNFunction.apply(x, self.weight, self.bias, self.running_mean, self.running_var,
                                        self.training, self.momentum, self.eps)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, norm_layer=InPlaceABN):
        super(BasicBlock, self).__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, padding=1, bias=False)
        self.bn1 = norm_layer(planes)
        self.relu = nn.ReLU(inplace=True)  # <-- IPL001: second in-place op on the output InPlaceABN saved for backward
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn2 = norm_layer(planes)

    def forward(self, x):
        identity = x
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.bn2(out)
        out = out + identity
        out = self.relu(out)
        return out


layer1 = nn.Sequential(BasicBlock(4, 4), BasicBlock(4, 4))
stem = nn.Conv2d(3, 4, 3, padding=1)
images = torch.randn(2, 3, 6, 6)
features = layer1(stem(images))
loss = features.mean()
loss.backward()
