# label: hazard raises
# why: the explainer registers full backward hooks on every module, so each hooked module returns a view created by a custom Function that the ResNet block's in-place ReLU then modifies
# source: https://github.com/shap/shap/issues/3466
import torch
import torch.nn as nn

torch.manual_seed(0)


class Bottleneck(nn.Module):
    expansion = 2

    def __init__(self, inplanes, planes, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, planes * self.expansion, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)  # <-- IPL001: in-place ReLU on outputs of modules wrapped by full backward hooks
        self.downsample = downsample

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity  # <-- IPL001: in-place add on the bn3 output returned through a backward-hook Function
        out = self.relu(out)
        return out


class TinyResNet(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(4)
        self.relu = nn.ReLU(inplace=True)  # <-- IPL001: stem in-place ReLU on the hooked bn1 output
        self.layer1 = Bottleneck(4, 4, downsample=nn.Sequential(nn.Conv2d(4, 8, 1, bias=False), nn.BatchNorm2d(8)))
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, num_classes)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.layer1(x)
        return self.fc(torch.flatten(self.avgpool(x), 1))


def deeplift_grad(module, grad_input, grad_output):
    return grad_input


def add_interim_values(module, input, output):
    module.x = input[0].detach()
    module.y = output.detach()


def add_handles(model, forward_handle, backward_handle):
    handles_list = []
    model_children = list(model.children())
    if model_children:
        for child in model_children:
            handles_list.extend(add_handles(child, forward_handle, backward_handle))
    else:
        handles_list.append(model.register_forward_hook(forward_handle))
        handles_list.append(model.register_full_backward_hook(backward_handle))
    return handles_list


model = TinyResNet().eval()
handles = add_handles(model, add_interim_values, deeplift_grad)
images = torch.rand(2, 3, 8, 8, requires_grad=True)
outputs = model(images)
selected = outputs[:, 0].sum()
grads = torch.autograd.grad(selected, images)[0]
for h in handles:
    h.remove()
