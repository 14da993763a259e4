# label: hazard silent
# why: residual_activation_inplace accumulates the residuals into the caller's tensor with x += r and then applies an in-place ReLU, so autograd.grad w.r.t. the caller's x differentiates the post-activation tensor and returns ones instead of the ReLU mask.
# source: https://discuss.pytorch.org/t/understanding-autograd-relu-inplace-true/89031
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def residual_activation_inplace(x, residual, activation, inplace):
    for r in residual:
        x += r  # <-- IPL004, IPL006: accumulates into the caller's tensor, which is later the autograd.grad target
    return activation(x, inplace=inplace)


class ResidualFusion(nn.Module):
    """ResNet-like fusion of a trunk feature with several residual branches."""

    def __init__(self, channels):
        super().__init__()
        self.branches = nn.ModuleList([nn.Conv2d(channels, channels, 3, padding=1) for _ in range(2)])

    def forward(self, x, skip):
        residual = [branch(skip) for branch in self.branches]
        return residual_activation_inplace(x, residual, F.relu, inplace=True)


fusion = ResidualFusion(4)
trunk = nn.Conv2d(3, 4, 3, padding=1)
stem = nn.Conv2d(3, 4, 1)
images = torch.randn(2, 3, 5, 5)

skip = stem(images)
x = trunk(images)            # pre-activation trunk feature
y = fusion(x, skip)
# gradient check of the fused activation w.r.t. the trunk feature (expects the ReLU mask)
grad_x, = torch.autograd.grad(y.sum(), x, retain_graph=True)
loss = y.pow(2).mean()
loss.backward()
