# label: hazard silent
# why: each new feature map is appended to the dense feature list and then rectified in place for a summary, so later concatenations read the ReLU'd value instead of the raw one.
import torch
import torch.nn as nn


class DenseLayer(nn.Module):
    def __init__(self, in_channels, growth_rate):
        super().__init__()
        self.norm = nn.BatchNorm2d(in_channels)
        self.conv = nn.Conv2d(in_channels, growth_rate, 3, padding=1, bias=False)

    def forward(self, prev_features):
        x = torch.cat(prev_features, dim=1)
        return self.conv(self.norm(x))


class DenseBlock(nn.Module):
    def __init__(self, num_layers, in_channels, growth_rate):
        super().__init__()
        self.layers = nn.ModuleList(
            DenseLayer(in_channels + i * growth_rate, growth_rate) for i in range(num_layers)
        )

    def forward(self, x):
        features = [x]
        summaries = []
        for layer in self.layers:
            new = layer(features)
            features.append(new)
            # per-layer summary for deep supervision
            summaries.append(new.relu_().mean(dim=(2, 3)))  # <-- IPL002
        return torch.cat(features, dim=1), torch.stack(summaries).sum(0)


torch.manual_seed(0)
block = DenseBlock(num_layers=3, in_channels=4, growth_rate=2)
x = torch.randn(2, 4, 5, 5)
out, aux = block(x)
loss = out.pow(2).mean() + 0.1 * aux.sum()
loss.backward()
