# label: safe
# why: after the fix bn2's output (saved by InPlaceABN for its backward) is combined with the residual out of place, and the only remaining in-place op is the final ReLU(inplace=True) on that fresh sum, which nothing saved.
# source: https://github.com/bonlime/pytorch-tools/commit/6367d39b7adbebf0fcfdfe64d57741179cca57e2
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class InPlaceABNFunction(torch.autograd.Function):
    """BatchNorm + identity activation computed in place; the output is saved instead of the input."""

    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        mean = x.mean(dim=(0, 2, 3))
        var = x.var(dim=(0, 2, 3), unbiased=False)
        x.sub_(mean[None, :, None, None]).div_(torch.sqrt(var + eps)[None, :, None, None])
        x.mul_(weight.abs()[None, :, None, None] + eps).add_(bias[None, :, None, None])
        ctx.eps = eps
        ctx.mark_dirty(x)
        ctx.save_for_backward(x, var, weight, bias)
        return x

    @staticmethod
    def backward(ctx, dy):
        y, var, weight, bias = ctx.saved_tensors
        gamma = weight.abs()[None, :, None, None] + ctx.eps
        xhat = (y - bias[None, :, None, None]) / gamma
        dbias = dy.sum(dim=(0, 2, 3))
        dweight = (dy * xhat).sum(dim=(0, 2, 3)) * weight.sign()
        mean_dy = dy.mean(dim=(0, 2, 3), keepdim=True)
        mean_dy_xhat = (dy * xhat).mean(dim=(0, 2, 3), keepdim=True)
        dx = gamma / torch.sqrt(var + ctx.eps)[None, :, None, None] * (dy - mean_dy - xhat * mean_dy_xhat)
        return dx, dweight, dbias, None


class InPlaceABN(nn.Module):
    def __init__(self, num_features, activation="identity", eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))
        self.activation = activation
        self.eps = eps

    def forward(self, x):
        x = InPlaceABNFunction.apply(x, self.weight, self.bias, self.eps)
        if self.activation == "relu":
            x = F.relu(x)
        return x


def conv3x3(in_planes, out_planes, stride=1, groups=1, dilation=1):
    """3x3 convolution with padding"""
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride,
                     padding=dilation, groups=groups, bias=False, dilation=dilation)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None, use_se=False,
                 dilation=1, norm_layer=InPlaceABN, norm_act='relu', antialias=False):
        super(BasicBlock, self).__init__()
        outplanes = planes * self.expansion
        self.conv1 = conv3x3(inplanes, planes, stride, dilation)
        self.bn1 = norm_layer(planes, activation=norm_act)
        self.conv2 = conv3x3(planes, outplanes)
        self.bn2 = norm_layer(outplanes, activation='identity')
        self.se_module = None
        self.final_act = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.antialias = antialias

    def forward(self, x):
        residual = x

        if self.downsample is not None:
            residual = self.downsample(x)

        out = self.conv1(x)
        out = self.bn1(out)
        out = self.conv2(out)
        # avoid 2 inplace ops by chaining into one long op
        if self.se_module is not None:
            out = self.se_module(self.bn2(out)) + residual
        else:
            out = self.bn2(out) + residual
        return self.final_act(out)


def main():
    stem = nn.Conv2d(3, 8, 3, padding=1)
    block = BasicBlock(8, 8, norm_layer=InPlaceABN)
    head = nn.Linear(8, 4)
    images = torch.randn(2, 3, 8, 8)
    target = torch.tensor([1, 3])
    feats = block(torch.relu(stem(images)))
    logits = head(feats.mean(dim=(2, 3)))
    loss = F.cross_entropy(logits, target)
    loss.backward()
    return loss.detach(), block.conv2.weight.grad, block.bn2.weight.grad


loss, conv2_grad, bn2_grad = main()
