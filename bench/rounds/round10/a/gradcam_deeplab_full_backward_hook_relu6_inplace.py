# label: hazard raises
# why: the Grad-CAM helper puts a full backward hook on a BatchNorm target layer of the DeepLabV3+ MobileNetV2 backbone; the hook wraps the BN output in a view-returning custom Function and the following ReLU6(inplace=True) then modifies that view in place, which autograd forbids
# source: https://github.com/WZMIAOMIAO/deep-learning-for-image-processing/issues/688
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ConvBNReLU(nn.Sequential):
    def __init__(self, in_channel, out_channel, kernel_size=3, stride=1, groups=1):
        padding = (kernel_size - 1) // 2
        super(ConvBNReLU, self).__init__(
            nn.Conv2d(in_channel, out_channel, kernel_size, stride, padding, groups=groups, bias=False),
            nn.BatchNorm2d(out_channel),
            nn.ReLU6(inplace=True)  # <-- IPL001: modifies in place the BN output that the full backward hook returned as a view
        )


class InvertedResidual(nn.Module):
    def __init__(self, in_channel, out_channel, stride, expand_ratio):
        super(InvertedResidual, self).__init__()
        hidden_channel = in_channel * expand_ratio
        self.use_shortcut = stride == 1 and in_channel == out_channel
        layers = []
        if expand_ratio != 1:
            layers.append(ConvBNReLU(in_channel, hidden_channel, kernel_size=1))
        layers.extend([
            ConvBNReLU(hidden_channel, hidden_channel, stride=stride, groups=hidden_channel),
            nn.Conv2d(hidden_channel, out_channel, kernel_size=1, bias=False),
            nn.BatchNorm2d(out_channel),
        ])
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        if self.use_shortcut:
            return x + self.conv(x)
        return self.conv(x)


class DeepLabV3PlusLite(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.features = nn.Sequential(
            ConvBNReLU(3, 8, stride=2),
            InvertedResidual(8, 8, 1, expand_ratio=2),
            InvertedResidual(8, 16, 2, expand_ratio=2),
        )
        self.aspp = nn.Sequential(nn.Conv2d(16, 16, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU(inplace=True))
        self.low_level = nn.Sequential(nn.Conv2d(8, 8, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True))
        self.classifier = nn.Conv2d(24, num_classes, 1)

    def forward(self, x):
        input_shape = x.shape[-2:]
        low = self.features[:2](x)
        high = self.features[2](low)
        high = F.interpolate(self.aspp(high), size=low.shape[-2:], mode="bilinear", align_corners=False)
        out = self.classifier(torch.cat([high, self.low_level(low)], dim=1))
        return {"out": F.interpolate(out, size=input_shape, mode="bilinear", align_corners=False)}


class ActivationsAndGradients:
    """ Class for extracting activations and
    registering gradients from targeted intermediate layers """

    def __init__(self, model, target_layers, reshape_transform=None):
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
        grad = grad_output[0]
        if self.reshape_transform is not None:
            grad = self.reshape_transform(grad)
        self.gradients = [grad.cpu().detach()] + self.gradients

    def __call__(self, x):
        self.gradients = []
        self.activations = []
        return self.model(x)


class SemanticSegmentationTarget:
    def __init__(self, category, mask):
        self.category = category
        self.mask = mask

    def __call__(self, model_output):
        return (model_output[self.category, :, :] * self.mask).sum()


model = DeepLabV3PlusLite().eval()
target_layers = [model.features[0][1]]   # BatchNorm2d of the stem ConvBNReLU
activations_and_grads = ActivationsAndGradients(model, target_layers)
img = torch.randn(1, 3, 16, 16)
output = activations_and_grads(img)["out"]
mask = (output[0].argmax(0) == 1).float()
target = SemanticSegmentationTarget(1, mask)
loss = target(output[0])
model.zero_grad()
loss.backward(retain_graph=True)
