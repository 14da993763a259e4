# label: hazard raises
# why: the CAM extractor puts a full backward hook on model.features, and DenseNet's forward then applies F.relu(features, inplace=True) to that hooked output, which autograd refuses.
# source: https://github.com/pytorch/pytorch/issues/61519
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

    def forward(self, prev_features):
        concated = torch.cat(prev_features, 1)
        return self.conv1(self.relu1(self.norm1(concated)))


class _DenseBlock(nn.ModuleDict):
    def __init__(self, num_layers, num_input_features, growth_rate):
        super().__init__()
        for i in range(num_layers):
            self.add_module('denselayer%d' % (i + 1), _DenseLayer(num_input_features + i * growth_rate, growth_rate))

    def forward(self, init_features):
        features = [init_features]
        for name, layer in self.items():
            features.append(layer(features))
        return torch.cat(features, 1)


class DenseNet(nn.Module):
    def __init__(self, growth_rate=4, num_init_features=8, num_classes=5):
        super().__init__()
        self.features = nn.Sequential()
        self.features.add_module('conv0', nn.Conv2d(3, num_init_features, kernel_size=3, padding=1, bias=False))
        self.features.add_module('denseblock1', _DenseBlock(2, num_init_features, growth_rate))
        num_features = num_init_features + 2 * growth_rate
        self.features.add_module('norm5', nn.BatchNorm2d(num_features))
        self.classifier = nn.Linear(num_features, num_classes)

    def forward(self, x):
        features = self.features(x)
        out = F.relu(features, inplace=True)  # <-- IPL001: in-place on the output of a module with a full backward hook
        out = F.adaptive_avg_pool2d(out, (1, 1))
        out = torch.flatten(out, 1)
        return self.classifier(out)


class GradCAM:
    def __init__(self, model, target_layer):
        self.model = model
        self.hook_a = None
        self.hook_g = None
        self.hook_handles = []
        module = dict(model.named_modules())[target_layer]
        self.hook_handles.append(module.register_forward_hook(self._hook_a))
        self.hook_handles.append(module.register_full_backward_hook(self._hook_g))

    def _hook_a(self, module, input, output):
        self.hook_a = output.detach()

    def _hook_g(self, module, grad_input, grad_output):
        self.hook_g = grad_output[0].detach()

    def __call__(self, class_idx, scores):
        loss = scores[:, class_idx].sum()
        self.model.zero_grad()
        loss.backward(retain_graph=True)
        weights = self.hook_g.mean(dim=(2, 3))
        cam = (weights[..., None, None] * self.hook_a).sum(1)
        return F.relu(cam)


model = DenseNet().eval()
cam_extractor = GradCAM(model, 'features')
img = torch.rand(1, 3, 8, 8)
scores = model(img)
activation_map = cam_extractor(scores.argmax().item(), scores)
