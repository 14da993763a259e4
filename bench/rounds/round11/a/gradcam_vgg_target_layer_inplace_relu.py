# label: hazard raises
# why: the Grad-CAM target layer model.features[-2] is itself an nn.ReLU(inplace=True); its full backward hook wraps the input in a view that the in-place ReLU then modifies.
# source: https://github.com/jacobgil/pytorch-grad-cam/issues/148
import torch
import torch.nn as nn

torch.manual_seed(0)

cfg = [8, "M", 16, 16, "M"]


def make_layers(cfg, batch_norm=False):
    layers = []
    in_channels = 3
    for v in cfg:
        if v == "M":
            layers += [nn.MaxPool2d(kernel_size=2, stride=2)]
        else:
            conv2d = nn.Conv2d(in_channels, v, kernel_size=3, padding=1)
            if batch_norm:
                layers += [conv2d, nn.BatchNorm2d(v), nn.ReLU(inplace=True)]
            else:
                layers += [conv2d, nn.ReLU(inplace=True)]  # <-- IPL001: in-place ReLU used as a hooked Grad-CAM target layer
            in_channels = v
    return nn.Sequential(*layers)


class VGG(nn.Module):
    def __init__(self, features, num_classes=4):
        super().__init__()
        self.features = features
        self.avgpool = nn.AdaptiveAvgPool2d((2, 2))
        self.classifier = nn.Sequential(nn.Linear(16 * 2 * 2, 32), nn.ReLU(True), nn.Linear(32, num_classes))

    def forward(self, x):
        x = self.features(x)
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        return self.classifier(x)


class GradCAM:
    def __init__(self, model, target_layers):
        self.model = model
        self.activations, self.gradients = [], []
        for target_layer in target_layers:
            target_layer.register_forward_hook(self.save_activation)
            target_layer.register_full_backward_hook(self.save_gradient)

    def save_activation(self, module, input, output):
        self.activations.append(output.detach())

    def save_gradient(self, module, grad_input, grad_output):
        self.gradients = [grad_output[0].detach()] + self.gradients

    def __call__(self, input_tensor, target_category):
        output = self.model(input_tensor)
        self.model.zero_grad()
        loss = output[:, target_category].sum()
        loss.backward(retain_graph=True)
        weights = self.gradients[-1].mean(dim=(2, 3), keepdim=True)
        return torch.relu((weights * self.activations[-1]).sum(1))


model = VGG(make_layers(cfg))
model.eval()
target_layers = [model.features[-2]]
cam = GradCAM(model=model, target_layers=target_layers)
input_tensor = torch.randn(1, 3, 8, 8)
grayscale_cam = cam(input_tensor, target_category=2)
