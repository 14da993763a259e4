# label: hazard raises
# why: an explainer registers full backward hooks on every leaf module, so each nn.ReLU(inplace=True) / F.relu(inplace=True) in DenseNet modifies a hooked module output in place, which autograd forbids.
# source: https://github.com/pytorch/vision/pull/8306
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class _DenseLayer(nn.Module):
    def __init__(self, num_input_features, growth_rate, bn_size):
        super().__init__()
        self.norm1 = nn.BatchNorm2d(num_input_features)
        self.relu1 = nn.ReLU(inplace=True)  # <-- IPL001: rewrites norm1's hooked output in place
        self.conv1 = nn.Conv2d(num_input_features, bn_size * growth_rate, kernel_size=1, bias=False)
        self.norm2 = nn.BatchNorm2d(bn_size * growth_rate)
        self.relu2 = nn.ReLU(inplace=True)  # <-- IPL001: rewrites norm2's hooked output in place
        self.conv2 = nn.Conv2d(bn_size * growth_rate, growth_rate, kernel_size=3, padding=1, bias=False)

    def bn_function(self, inputs):
        concated_features = torch.cat(inputs, 1)
        return self.conv1(self.relu1(self.norm1(concated_features)))

    def forward(self, input):
        prev_features = [input] if isinstance(input, torch.Tensor) else input
        bottleneck_output = self.bn_function(prev_features)
        return self.conv2(self.relu2(self.norm2(bottleneck_output)))


class _DenseBlock(nn.ModuleDict):
    def __init__(self, num_layers, num_input_features, bn_size, growth_rate):
        super().__init__()
        for i in range(num_layers):
            layer = _DenseLayer(num_input_features + i * growth_rate, growth_rate, bn_size)
            self.add_module("denselayer%d" % (i + 1), layer)

    def forward(self, init_features):
        features = [init_features]
        for name, layer in self.items():
            new_features = layer(features)
            features.append(new_features)
        return torch.cat(features, 1)


class DenseNet(nn.Module):
    def __init__(self, growth_rate=4, block_config=(2,), num_init_features=6, bn_size=2, num_classes=3):
        super().__init__()
        self.features = nn.Sequential(OrderedDict([
            ("conv0", nn.Conv2d(3, num_init_features, kernel_size=3, padding=1, bias=False)),
            ("norm0", nn.BatchNorm2d(num_init_features)),
            ("relu0", nn.ReLU(inplace=True)),  # <-- IPL001: rewrites norm0's hooked output in place
        ]))
        num_features = num_init_features
        for i, num_layers in enumerate(block_config):
            block = _DenseBlock(num_layers, num_features, bn_size, growth_rate)
            self.features.add_module("denseblock%d" % (i + 1), block)
            num_features = num_features + num_layers * growth_rate
        self.features.add_module("norm5", nn.BatchNorm2d(num_features))
        self.classifier = nn.Linear(num_features, num_classes)

    def forward(self, x):
        features = self.features(x)
        out = F.relu(features, inplace=True)  # <-- IPL001: rewrites norm5's hooked output in place
        out = F.adaptive_avg_pool2d(out, (1, 1))
        out = torch.flatten(out, 1)
        return self.classifier(out)


class DeepExplainerHooks:
    def __init__(self, model):
        self.model = model
        self.handles = []
        self.add_handles(model, self.add_interim_values, self.deeplift_grad)

    def add_interim_values(self, module, input, output):
        module.y = output.detach()

    def deeplift_grad(self, module, grad_input, grad_output):
        return grad_input

    def add_handles(self, model, forward_handle, backward_handle):
        model_children = list(model.children())
        if model_children:
            for child in model_children:
                self.add_handles(child, forward_handle, backward_handle)
        else:
            self.handles.append(model.register_forward_hook(forward_handle))
            self.handles.append(model.register_full_backward_hook(backward_handle))


model = DenseNet()
model.eval()
explainer = DeepExplainerHooks(model)
images = torch.rand(2, 3, 6, 6, requires_grad=True)
outputs = model(images)
selected = outputs[:, 1].sum()
attributions = torch.autograd.grad(selected, images)[0]
