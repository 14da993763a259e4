# label: hazard raises
# why: Grad-CAM registers a full backward hook on the last DenseNet norm layer, and DenseNet's forward then applies F.relu(features, inplace=True) to that hooked output.
# source: https://github.com/jacobgil/pytorch-grad-cam/issues/147
import torch
import torch.nn as nn
import torch.nn.functional as F
from collections import OrderedDict

torch.manual_seed(0)


class DenseNet(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.features = nn.Sequential(OrderedDict([
            ("conv0", nn.Conv2d(3, 8, kernel_size=3, padding=1, bias=False)),
            ("norm0", nn.BatchNorm2d(8)),
            ("relu0", nn.ReLU(inplace=True)),
            ("conv1", nn.Conv2d(8, 8, kernel_size=3, padding=1, bias=False)),
            ("norm5", nn.BatchNorm2d(8)),
        ]))
        self.classifier = nn.Linear(8, num_classes)

    def forward(self, x):
        features = self.features(x)
        out = F.relu(features, inplace=True)  # <-- IPL001: in-place ReLU on the output of a module carrying a full backward hook
        out = F.adaptive_avg_pool2d(out, (1, 1))
        out = torch.flatten(out, 1)
        out = self.classifier(out)
        return out


class ActivationsAndGradients:
    """ Class for extracting activations and
    registering gradients from targeted intermediate layers """

    def __init__(self, model, target_layer):
        self.model = model
        self.gradients = []
        self.activations = []
        target_layer.register_forward_hook(self.save_activation)
        target_layer.register_full_backward_hook(self.save_gradient)

    def save_activation(self, module, input, output):
        self.activations.append(output.cpu().detach())

    def save_gradient(self, module, grad_input, grad_output):
        # Gradients are computed in reverse order
        self.gradients = [grad_output[0].cpu().detach()] + self.gradients

    def __call__(self, x):
        self.gradients = []
        self.activations = []
        return self.model(x)


model = DenseNet()
model.eval()
cam = ActivationsAndGradients(model, model.features[-1])
image = torch.randn(1, 3, 8, 8)
output = cam(image)
target_category = 1
loss = output[:, target_category].sum()
model.zero_grad()
loss.backward(retain_graph=True)
