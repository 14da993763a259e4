# label: hazard raises
# why: the CAM extractor puts a full backward hook on `model.features`, whose output is a view from BackwardHookFunction, and DenseNet.forward then applies F.relu(..., inplace=True) to that output.
# source: https://github.com/frgfm/torch-cam/issues/72
import torch
import torch.nn as nn
import torch.nn.functional as F
from collections import OrderedDict

torch.manual_seed(0)


class _DenseLayer(nn.Module):
    def __init__(self, num_input_features, growth_rate, bn_size):
        super(_DenseLayer, self).__init__()
        self.norm1 = nn.BatchNorm2d(num_input_features)
        self.relu1 = nn.ReLU(inplace=True)
        self.conv1 = nn.Conv2d(num_input_features, bn_size * growth_rate, kernel_size=1, bias=False)
        self.norm2 = nn.BatchNorm2d(bn_size * growth_rate)
        self.relu2 = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(bn_size * growth_rate, growth_rate, kernel_size=3, padding=1, bias=False)

    def forward(self, input):
        prev_features = [input] if isinstance(input, torch.Tensor) else input
        concated = torch.cat(prev_features, 1)
        bottleneck_output = self.conv1(self.relu1(self.norm1(concated)))
        return self.conv2(self.relu2(self.norm2(bottleneck_output)))


class _DenseBlock(nn.ModuleDict):
    def __init__(self, num_layers, num_input_features, bn_size, growth_rate):
        super(_DenseBlock, self).__init__()
        for i in range(num_layers):
            layer = _DenseLayer(num_input_features + i * growth_rate, growth_rate, bn_size)
            self.add_module('denselayer%d' % (i + 1), layer)

    def forward(self, init_features):
        features = [init_features]
        for name, layer in self.items():
            new_features = layer(features)
            features.append(new_features)
        return torch.cat(features, 1)


class DenseNet(nn.Module):
    def __init__(self, growth_rate=4, block_config=(2, 2), num_init_features=8, bn_size=2, num_classes=5):
        super(DenseNet, self).__init__()
        self.features = nn.Sequential(OrderedDict([
            ('conv0', nn.Conv2d(3, num_init_features, kernel_size=3, padding=1, bias=False)),
            ('norm0', nn.BatchNorm2d(num_init_features)),
            ('relu0', nn.ReLU(inplace=True)),
        ]))
        num_features = num_init_features
        for i, num_layers in enumerate(block_config):
            block = _DenseBlock(num_layers, num_features, bn_size, growth_rate)
            self.features.add_module('denseblock%d' % (i + 1), block)
            num_features = num_features + num_layers * growth_rate
        self.features.add_module('norm5', nn.BatchNorm2d(num_features))
        self.classifier = nn.Linear(num_features, num_classes)

    def forward(self, x):
        features = self.features(x)
        out = F.relu(features, inplace=True)  # <-- IPL001: in-place ReLU on the hooked module's output view
        out = F.adaptive_avg_pool2d(out, (1, 1))
        out = torch.flatten(out, 1)
        out = self.classifier(out)
        return out


class GradCAM(object):
    def __init__(self, model, target_layer):
        self.model = model
        self.submodule = dict(model.named_modules())[target_layer]
        self.hook_a = None
        self.hook_g = None
        self.hook_handles = []
        self.hook_handles.append(self.submodule.register_forward_hook(self._hook_a))
        self.hook_handles.append(self.submodule.register_full_backward_hook(self._hook_g))

    def _hook_a(self, module, input, output):
        self.hook_a = output.data

    def _hook_g(self, module, grad_input, grad_output):
        self.hook_g = grad_output[0].data

    def __call__(self, class_idx, scores):
        loss = scores[:, class_idx].sum()
        self.model.zero_grad()
        loss.backward(retain_graph=True)
        weights = self.hook_g.mean(axis=(2, 3))
        return torch.relu((weights[..., None, None] * self.hook_a).sum(1))


model = DenseNet().eval()
input_tensor = torch.rand(1, 3, 8, 8)
extract = GradCAM(model=model, target_layer='features')
out = model(input_tensor)
activation_map = extract(out.squeeze(0).argmax().item(), out)
