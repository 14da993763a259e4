# label: hazard raises
# why: a full backward hook on model.features wraps its output in BackwardHookFunction; DenseNet.forward then applies F.relu(features, inplace=True) to that output, which autograd forbids
# source: https://github.com/pytorch/vision/issues/4164 (also https://github.com/pytorch/pytorch/issues/61519, https://github.com/jacobgil/pytorch-grad-cam/issues/147)
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class _DenseLayer(nn.Module):
    def __init__(self, num_input_features, growth_rate):
        super().__init__()
        self.norm1 = nn.BatchNorm2d(num_input_features)
        self.relu1 = nn.ReLU(inplace=True)
        self.conv1 = nn.Conv2d(num_input_features, growth_rate, kernel_size=3, padding=1, bias=False)

    def forward(self, input):
        prev_features = [input] if isinstance(input, torch.Tensor) else input
        concated_features = torch.cat(prev_features, 1)
        new_features = self.conv1(self.relu1(self.norm1(concated_features)))
        return new_features


class _DenseBlock(nn.ModuleDict):
    def __init__(self, num_layers, num_input_features, growth_rate):
        super().__init__()
        for i in range(num_layers):
            layer = _DenseLayer(num_input_features + i * growth_rate, growth_rate)
            self.add_module("denselayer%d" % (i + 1), layer)

    def forward(self, init_features):
        features = [init_features]
        for name, layer in self.items():
            new_features = layer(features)
            features.append(new_features)
        return torch.cat(features, 1)


class DenseNet(nn.Module):
    def __init__(self, growth_rate=4, num_init_features=8, num_classes=5):
        super().__init__()
        self.features = nn.Sequential(OrderedDict([
            ("conv0", nn.Conv2d(3, num_init_features, kernel_size=3, padding=1, bias=False)),
            ("norm0", nn.BatchNorm2d(num_init_features)),
            ("relu0", nn.ReLU(inplace=True)),
        ]))
        block = _DenseBlock(2, num_init_features, growth_rate)
        self.features.add_module("denseblock1", block)
        num_features = num_init_features + 2 * growth_rate
        self.features.add_module("norm5", nn.BatchNorm2d(num_features))
        self.classifier = nn.Linear(num_features, num_classes)

    def forward(self, x):
        features = self.features(x)
        out = F.relu(features, inplace=True)  # <-- IPL001: in-place on the output of a module with a full backward hook
        out = F.adaptive_avg_pool2d(out, (1, 1))
        out = torch.flatten(out, 1)
        out = self.classifier(out)
        return out


model = DenseNet().eval()

grads = {}


def hook_g(m, grad_input, grad_output):
    grads["features"] = grad_output[0]


model.features.register_full_backward_hook(hook_g)
input_tensor = torch.rand(2, 3, 8, 8)
out = model(input_tensor)
out[:, 1].sum().backward()
