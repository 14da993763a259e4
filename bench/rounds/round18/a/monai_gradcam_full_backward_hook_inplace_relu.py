# label: hazard raises
# why: GradCAM registers a full backward hook on the target layer "class_layers.relu", which is an nn.ReLU(inplace=True); the hook wraps the layer input in a BackwardHookFunction view and the in-place ReLU on that view raises.
# source: https://github.com/Project-MONAI/MONAI/commit/4b8442c50f2f910c8c93e46a047ab83b6a0faedf (PR https://github.com/Project-MONAI/MONAI/pull/1966, issue https://github.com/Project-MONAI/MONAI/issues/1965)
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DenseNet(nn.Module):
    def __init__(self, in_channels=1, out_channels=3, init_features=8):
        super().__init__()
        self.features = nn.Sequential(OrderedDict([
            ("conv0", nn.Conv2d(in_channels, init_features, kernel_size=3, padding=1, bias=False)),
            ("norm0", nn.BatchNorm2d(init_features)),
            ("relu0", nn.ReLU()),
            ("conv1", nn.Conv2d(init_features, init_features, kernel_size=3, padding=1, bias=False)),
            ("norm5", nn.BatchNorm2d(init_features)),
        ]))
        self.class_layers = nn.Sequential(OrderedDict([
            ("relu", nn.ReLU(inplace=True)),  # <-- IPL001: in-place ReLU on the view produced by the full backward hook
            ("pool", nn.AdaptiveAvgPool2d(1)),
            ("flatten", nn.Flatten(1)),
            ("out", nn.Linear(init_features, out_channels)),
        ]))

    def forward(self, x):
        x = self.features(x)
        x = self.class_layers(x)
        return x


class ModelWithHooks:
    def __init__(self, nn_module, target_layer_names, register_forward=False, register_backward=False):
        self.model = nn_module
        self.target_layers = (target_layer_names,) if isinstance(target_layer_names, str) else tuple(target_layer_names)
        self.gradients = {}
        self.activations = {}
        self.score = None
        self.class_idx = None
        self.register_backward = register_backward
        self.register_forward = register_forward

        for name, mod in nn_module.named_modules():
            if name not in self.target_layers:
                continue
            if self.register_backward:
                mod.register_full_backward_hook(self.backward_hook(name))
            if self.register_forward:
                mod.register_forward_hook(self.forward_hook(name))

    def backward_hook(self, name):
        def _hook(_module, _grad_input, grad_output):
            self.gradients[name] = grad_output[0]
        return _hook

    def forward_hook(self, name):
        def _hook(_module, _input, output):
            self.activations[name] = output
        return _hook

    def class_score(self, logits, class_idx):
        return logits[:, class_idx].squeeze()

    def __call__(self, x, class_idx=None, retain_graph=False):
        train = self.model.training
        self.model.eval()
        logits = self.model(x)
        self.class_idx = logits.max(1)[-1] if class_idx is None else class_idx
        acti, grad = None, None
        if self.register_forward:
            acti = tuple(self.activations[layer] for layer in self.target_layers)
        if self.register_backward:
            self.score = self.class_score(logits, self.class_idx)
            self.model.zero_grad()
            self.score.sum().backward(retain_graph=retain_graph)
            grad = tuple(self.gradients[layer] for layer in self.target_layers)
        if train:
            self.model.train()
        return logits, acti, grad


class GradCAM:
    def __init__(self, nn_module, target_layers):
        self.nn_module = ModelWithHooks(nn_module, target_layers, register_forward=True, register_backward=True)

    def compute_map(self, x, class_idx=None, retain_graph=False, layer_idx=-1):
        _, acti, grad = self.nn_module(x, class_idx=class_idx, retain_graph=retain_graph)
        acti, grad = acti[layer_idx], grad[layer_idx]
        b, c, *spatial = grad.shape
        weights = grad.view(b, c, -1).mean(2).view(b, c, *[1] * len(spatial))
        acti_map = (weights * acti).sum(1, keepdim=True)
        return F.relu(acti_map)


model_2d = DenseNet()
cam = GradCAM(nn_module=model_2d, target_layers="class_layers.relu")
x = torch.rand(2, 1, 8, 8)
result = cam.compute_map(x, class_idx=1)
