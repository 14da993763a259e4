# label: safe
# why: the fixed ActivationsAndGradients captures the gradient with a tensor hook registered from a forward hook, so DenseNet's F.relu(features, inplace=True) is allowed and the hook still sees the gradient of the pre-ReLU features
# source: https://github.com/jacobgil/pytorch-grad-cam/pull/183 (pytorch_grad_cam/activations_and_gradients.py)
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DenseNetLite(nn.Module):
    def __init__(self, num_features=8, num_classes=5):
        super().__init__()
        self.features = nn.Sequential(OrderedDict([
            ("conv0", nn.Conv2d(3, num_features, kernel_size=3, padding=1, bias=False)),
            ("norm0", nn.BatchNorm2d(num_features)),
            ("relu0", nn.ReLU(inplace=True)),
            ("conv1", nn.Conv2d(num_features, num_features, kernel_size=3, padding=1, bias=False)),
            ("norm5", nn.BatchNorm2d(num_features)),
        ]))
        self.classifier = nn.Linear(num_features, num_classes)

    def forward(self, x):
        features = self.features(x)
        out = F.relu(features, inplace=True)
        out = F.adaptive_avg_pool2d(out, (1, 1))
        out = torch.flatten(out, 1)
        return self.classifier(out)


class ActivationsAndGradients:
    """ Class for extracting activations and
    registering gradients from targetted intermediate layers """

    def __init__(self, model, target_layers, reshape_transform):
        self.model = model
        self.gradients = []
        self.activations = []
        self.reshape_transform = reshape_transform
        self.handles = []
        for target_layer in target_layers:
            self.handles.append(
                target_layer.register_forward_hook(self.save_activation))
            # Because of https://github.com/pytorch/pytorch/issues/61519,
            # we don't use backward hook to record gradients.
            self.handles.append(
                target_layer.register_forward_hook(self.save_gradient))

    def save_activation(self, module, input, output):
        activation = output
        if self.reshape_transform is not None:
            activation = self.reshape_transform(activation)
        self.activations.append(activation.cpu().detach().clone())  # the repo keeps activation.cpu().detach(); cloned here

    def save_gradient(self, module, input, output):
        if not hasattr(output, "requires_grad") or not output.requires_grad:
            # You can only register hooks on tensor requires grad.
            return

        # Gradients are computed in reverse order
        def _store_grad(grad):
            if self.reshape_transform is not None:
                grad = self.reshape_transform(grad)
            self.gradients = [grad.cpu().detach()] + self.gradients

        output.register_hook(_store_grad)

    def __call__(self, x):
        self.gradients = []
        self.activations = []
        return self.model(x)

    def release(self):
        for handle in self.handles:
            handle.remove()


model = DenseNetLite().eval()
activations_and_grads = ActivationsAndGradients(model, [model.features], None)
input_tensor = torch.rand(2, 3, 8, 8)
outputs = activations_and_grads(input_tensor)
score = outputs[:, 1].sum()
model.zero_grad()
score.backward()

activations = activations_and_grads.activations[0]
grads = activations_and_grads.gradients[0]
weights = grads.mean(dim=(2, 3), keepdim=True)
cam = F.relu((weights * activations).sum(dim=1))
activations_and_grads.release()
