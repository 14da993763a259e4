# label: hazard raises
# why: FastNormalizedFusion does `weights = F.relu(self.weights)` and then normalizes with `weights /= weights.sum() + self.eps`, overwriting the ReLU output that ReluBackward saved, so training the fusion weights raises in backward.
# source: https://github.com/bonlime/pytorch-tools/blob/549f6ec5bf6f9708866e7271b80cb38bbfc77210/pytorch_tools/modules/bifpn.py (FastNormalizedFusion.forward)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class FastNormalizedFusion(nn.Module):
    """Combines 2 or 3 feature maps into one with weights."""

    def __init__(self, in_nodes, activation="relu"):
        super().__init__()
        self.weights = nn.Parameter(torch.ones(in_nodes, dtype=torch.float32))
        self.eps = 1e-4
        self.act = nn.ReLU()

    def forward(self, *features):
        # Assure that weights are positive (see paper)
        weights = F.relu(self.weights)
        # Normalize weights
        weights /= weights.sum() + self.eps  # <-- IPL001
        fused_features = sum([p * w for p, w in zip(features, weights)])
        return self.act(fused_features)


class BiFPNLayer(nn.Module):
    def __init__(self, channels=8):
        super().__init__()
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.down = nn.MaxPool2d(3, stride=2, padding=1)
        self.fuse_up = FastNormalizedFusion(in_nodes=2)
        self.fuse_out = FastNormalizedFusion(in_nodes=3)
        self.conv_up = nn.Conv2d(channels, channels, 3, padding=1)
        self.conv_out = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, features):
        p4, p5 = features
        p4_up = self.conv_up(self.fuse_up(p4, self.up(p5)))
        p5_out = self.conv_out(self.fuse_out(p5, self.down(p4_up), p5))
        return p4_up, p5_out


def main():
    layer = BiFPNLayer()
    p4 = torch.randn(2, 8, 16, 16)
    p5 = torch.randn(2, 8, 8, 8)
    p4_out, p5_out = layer([p4, p5])
    loss = p4_out.pow(2).mean() + p5_out.pow(2).mean()
    loss.backward()
    return loss.detach(), layer.fuse_up.weights.grad


loss, grad = main()
