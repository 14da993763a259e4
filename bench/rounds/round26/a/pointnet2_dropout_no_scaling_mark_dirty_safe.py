# label: safe
# why: _DropoutNoScaling multiplies its input in place only after ctx.mark_dirty(input) and returns that same tensor, and the input is a fresh torch.cat output that no backward formula saved, so autograd rebases the graph correctly.
# source: https://github.com/erikwijmans/Pointnet2_PyTorch/blob/dc4e2b0db3dfee4f1ac50485807f028c333b4b8a/utils/pytorch_utils.py
from itertools import repeat

import torch
import torch.nn as nn
from torch.autograd.function import InplaceFunction

torch.manual_seed(0)


class _DropoutNoScaling(InplaceFunction):
    @staticmethod
    def _make_noise(input):
        return input.new().resize_as_(input)

    @classmethod
    def forward(cls, ctx, input, p=0.5, train=False, inplace=False):
        if p < 0 or p > 1:
            raise ValueError("dropout probability has to be between 0 and 1, "
                             "but got {}".format(p))
        ctx.p = p
        ctx.train = train
        ctx.inplace = inplace

        if ctx.inplace:
            ctx.mark_dirty(input)
            output = input
        else:
            output = input.clone()

        if ctx.p > 0 and ctx.train:
            ctx.noise = cls._make_noise(input)
            if ctx.p == 1:
                ctx.noise.fill_(0)
            else:
                ctx.noise.bernoulli_(1 - ctx.p)
            ctx.noise = ctx.noise.expand_as(input)
            output.mul_(ctx.noise)

        return output

    @staticmethod
    def backward(ctx, grad_output):
        if ctx.p > 0 and ctx.train:
            return grad_output.mul(ctx.noise), None, None, None
        else:
            return grad_output, None, None, None


class _FeatureDropoutNoScaling(_DropoutNoScaling):
    @staticmethod
    def _make_noise(input):
        return input.new().resize_(input.size(0), input.size(1), *repeat(1, input.dim() - 2))


feature_dropout_no_scaling = _FeatureDropoutNoScaling.apply


class RandomDropout(nn.Module):
    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        self.p = p
        self.inplace = inplace

    def forward(self, X):
        theta = float(torch.empty(1).uniform_(0, self.p)[0])
        return feature_dropout_no_scaling(X, theta, self.training, self.inplace)


class Pointnet2SemSeg(nn.Module):
    def __init__(self, num_classes=4, input_channels=3):
        super().__init__()
        self.point_embed = nn.Linear(input_channels, input_channels)
        self.initial_dropout = RandomDropout(0.95, inplace=True)
        self.sa = nn.Sequential(nn.Linear(input_channels + 3, 16), nn.ReLU())
        self.fc = nn.Linear(16, num_classes)

    def forward(self, xyz, points=None):
        points = self.point_embed(points)
        if points is not None and self.initial_dropout is not None:
            tmp = self.initial_dropout(torch.cat([points, xyz], dim=-1))
            l0_points, l0_xyz = tmp.split(points.size(-1), dim=-1)
        l0 = torch.cat([l0_points, l0_xyz], dim=-1)
        return self.fc(self.sa(l0))


def main():
    model = Pointnet2SemSeg()
    model.train()
    xyz = torch.randn(2, 32, 3)
    points = torch.randn(2, 32, 3)
    labels = torch.randint(0, 4, (2 * 32,))
    pred = model(xyz, points)
    loss = nn.functional.cross_entropy(pred.view(-1, 4), labels)
    loss.backward()
    return loss.detach(), model.point_embed.weight.grad


loss, embed_grad = main()
