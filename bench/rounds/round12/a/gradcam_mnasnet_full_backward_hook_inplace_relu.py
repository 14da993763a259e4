# label: hazard raises
# why: a full backward hook on the target BatchNorm wraps its output in BackwardHookFunction, and the next ReLU(inplace=True) in MNASNet.layers modifies that output in place.
# source: https://github.com/jacobgil/pytorch-grad-cam/issues/164
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)

_BN_MOMENTUM = 1 - 0.9997


class _InvertedResidual(nn.Module):
    def __init__(self, in_ch, out_ch, kernel_size, stride, expansion_factor, bn_momentum=0.1):
        super().__init__()
        mid_ch = in_ch * expansion_factor
        self.apply_residual = in_ch == out_ch and stride == 1
        self.layers = nn.Sequential(
            nn.Conv2d(in_ch, mid_ch, 1, bias=False),
            nn.BatchNorm2d(mid_ch, momentum=bn_momentum),
            nn.ReLU(inplace=True),
            nn.Conv2d(mid_ch, mid_ch, kernel_size, padding=kernel_size // 2, stride=stride, groups=mid_ch, bias=False),
            nn.BatchNorm2d(mid_ch, momentum=bn_momentum),
            nn.ReLU(inplace=True),
            nn.Conv2d(mid_ch, out_ch, 1, bias=False),
            nn.BatchNorm2d(out_ch, momentum=bn_momentum),
        )

    def forward(self, input):
        if self.apply_residual:
            return self.layers(input) + input
        else:
            return self.layers(input)


class MNASNet(nn.Module):
    def __init__(self, num_classes=5, dropout=0.2):
        super().__init__()
        layers = [
            nn.Conv2d(3, 8, 3, padding=1, stride=2, bias=False),
            nn.BatchNorm2d(8, momentum=_BN_MOMENTUM),
            nn.ReLU(inplace=True),
            _InvertedResidual(8, 8, 3, 1, 3, _BN_MOMENTUM),
            _InvertedResidual(8, 16, 3, 2, 3, _BN_MOMENTUM),
            nn.Conv2d(16, 32, 1, padding=0, stride=1, bias=False),
            nn.BatchNorm2d(32, momentum=_BN_MOMENTUM),
            nn.ReLU(inplace=True),  # <-- IPL001: rewrites in place the hooked BatchNorm output (BackwardHookFunction view)
        ]
        self.layers = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout, inplace=True), nn.Linear(32, num_classes))

    def forward(self, x):
        x = self.layers(x)
        x = x.mean([2, 3])
        return self.classifier(x)


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
            self.handles.append(target_layer.register_forward_hook(self.save_activation))
            self.handles.append(target_layer.register_full_backward_hook(self.save_gradient))

    def save_activation(self, module, input, output):
        activation = output
        if self.reshape_transform is not None:
            activation = self.reshape_transform(activation)
        self.activations.append(activation.cpu().detach())

    def save_gradient(self, module, grad_input, grad_output):
        # Gradients are computed in reverse order
        grad = grad_output[0]
        if self.reshape_transform is not None:
            grad = self.reshape_transform(grad)
        self.gradients = [grad.cpu().detach()] + self.gradients

    def __call__(self, x):
        self.gradients = []
        self.activations = []
        return self.model(x)

    def release(self):
        for handle in self.handles:
            handle.remove()


class GradCAM:
    def __init__(self, model, target_layers, reshape_transform=None):
        self.model = model.eval()
        self.target_layers = target_layers
        self.activations_and_grads = ActivationsAndGradients(self.model, target_layers, reshape_transform)

    def get_loss(self, output, target_category):
        loss = 0
        for i in range(len(target_category)):
            loss = loss + output[i, target_category[i]]
        return loss

    def get_cam_weights(self, grads):
        return np.mean(grads, axis=(2, 3))

    def forward(self, input_tensor, target_category=None):
        output = self.activations_and_grads(input_tensor)
        if target_category is None:
            target_category = np.argmax(output.cpu().data.numpy(), axis=-1)
        self.model.zero_grad()
        loss = self.get_loss(output, target_category)
        loss.backward(retain_graph=True)
        activations = self.activations_and_grads.activations[-1].numpy()
        grads = self.activations_and_grads.gradients[-1].numpy()
        weights = self.get_cam_weights(grads)
        cam = (weights[:, :, None, None] * activations).sum(axis=1)
        cam = np.maximum(cam, 0)
        return torch.from_numpy(cam)

    def __call__(self, input_tensor, target_category=None):
        return self.forward(input_tensor, target_category)


model = MNASNet()
target_layers = [model.layers[-2]]
cam = GradCAM(model=model, target_layers=target_layers)
input_tensor = torch.randn(1, 3, 16, 16, requires_grad=True)
grayscale_cam = cam(input_tensor=input_tensor)
