# label: safe
# why: DenseNet layer: concat of previous features -> BN -> ReLU(inplace) -> conv; the inplace ReLU writes the BN output, never the concatenated inputs
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DenseLayer(nn.Module):
    def __init__(self, cin, growth, bn_size=2):
        super().__init__()
        self.norm1 = nn.BatchNorm2d(cin)
        self.relu1 = nn.ReLU(inplace=True)
        self.conv1 = nn.Conv2d(cin, bn_size * growth, 1, bias=False)
        self.norm2 = nn.BatchNorm2d(bn_size * growth)
        self.relu2 = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(bn_size * growth, growth, 3, padding=1, bias=False)

    def forward(self, inputs):
        concated = torch.cat(inputs, 1)
        bottleneck = self.conv1(self.relu1(self.norm1(concated)))
        return self.conv2(self.relu2(self.norm2(bottleneck)))


class DenseBlock(nn.Module):
    def __init__(self, num_layers, cin, growth):
        super().__init__()
        self.layers = nn.ModuleList([DenseLayer(cin + i * growth, growth) for i in range(num_layers)])

    def forward(self, init_features):
        features = [init_features]
        for layer in self.layers:
            features.append(layer(features))
        return torch.cat(features, 1)


block = DenseBlock(3, 4, 2)
stem = nn.Conv2d(3, 4, 3, padding=1)
x = torch.randn(2, 3, 6, 6)
out = F.relu(block(stem(x)), inplace=True)
loss = out.mean()
loss.backward()
