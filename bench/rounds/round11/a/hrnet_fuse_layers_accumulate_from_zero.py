# label: safe
# why: the fuse step starts each accumulator from y = 0, so the first `y += ...` creates a new tensor and later in-place adds only touch that private sum, never the branch outputs x[j] reused by other targets.
# source: https://github.com/open-mmlab/mmdetection/pull/610
import torch
import torch.nn as nn

torch.manual_seed(0)


class HighResolutionModule(nn.Module):
    def __init__(self, num_branches=2, num_channels=(4, 8)):
        super().__init__()
        self.num_branches = num_branches
        self.branches = nn.ModuleList([
            nn.Sequential(nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU(inplace=True))
            for c in num_channels
        ])
        self.fuse_layers = self._make_fuse_layers(num_channels)
        self.relu = nn.ReLU(inplace=False)

    def _make_fuse_layers(self, num_channels):
        fuse_layers = []
        for i in range(self.num_branches):
            fuse_layer = []
            for j in range(self.num_branches):
                if j > i:
                    fuse_layer.append(nn.Sequential(
                        nn.Conv2d(num_channels[j], num_channels[i], 1, bias=False),
                        nn.BatchNorm2d(num_channels[i]),
                        nn.Upsample(scale_factor=2 ** (j - i), mode="nearest")))
                elif j == i:
                    fuse_layer.append(None)
                else:
                    fuse_layer.append(nn.Sequential(
                        nn.Conv2d(num_channels[j], num_channels[i], 3, 2, 1, bias=False),
                        nn.BatchNorm2d(num_channels[i])))
            fuse_layers.append(nn.ModuleList(fuse_layer))
        return nn.ModuleList(fuse_layers)

    def forward(self, x):
        for i in range(self.num_branches):
            x[i] = self.branches[i](x[i])

        x_fused = []
        for i in range(len(self.fuse_layers)):
            y = 0
            for j in range(self.num_branches):
                if i == j:
                    y += x[j]
                else:
                    y += self.fuse_layers[i][j](x[j])
            x_fused.append(self.relu(y))
        return x_fused


module = HighResolutionModule()
x = [torch.randn(2, 4, 8, 8), torch.randn(2, 8, 4, 4)]
outs = module(list(x))
loss = outs[0].mean() + outs[1].pow(2).mean()
loss.backward()
