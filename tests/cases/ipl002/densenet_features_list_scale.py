# label: hazard silent
# why: new is appended to the dense feature list and then scaled in place, so later layers concatenate the scaled map instead of the raw one.
import torch
import torch.nn as nn

torch.manual_seed(0)


class DenseBlock(nn.Module):
    def __init__(self, c0, growth, n_layers, res_scale=0.2):
        super().__init__()
        self.layers = nn.ModuleList(
            nn.Sequential(nn.BatchNorm2d(c0 + k * growth), nn.ReLU(), nn.Conv2d(c0 + k * growth, growth, 3, padding=1))
            for k in range(n_layers)
        )
        self.res_scale = res_scale

    def forward(self, x):
        features = [x]
        acc = 0
        for layer in self.layers:
            new = layer(torch.cat(features, dim=1))
            features.append(new)
            new.mul_(self.res_scale)  # <-- IPL002: features[-1] is the same tensor
            acc = acc + new
        return torch.cat(features, dim=1), acc


block = DenseBlock(4, 3, 3)
block.eval()
x = torch.randn(2, 4, 5, 5)
dense_out, residual = block(x)
(dense_out.mean() + residual.mean()).backward()
