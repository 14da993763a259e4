# label: hazard raises
# why: DeepExplainer wraps every nn.ReLU with a full backward hook; torchvision's Bottleneck applies its shared ReLU(inplace=True), so the in-place ReLU writes into the view returned by BackwardHookFunction and PyTorch raises during the explainer's forward pass.
# source: https://github.com/shap/shap/issues/1479
import torch
import torch.nn as nn

torch.manual_seed(0)


class Bottleneck(nn.Module):
    expansion = 2

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super(Bottleneck, self).__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, kernel_size=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, planes * self.expansion, kernel_size=1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)  # <-- IPL001: in-place ReLU writes into the hook's view of its input
        self.downsample = downsample

    def forward(self, x):
        identity = x
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.bn2(out)
        out = self.relu(out)
        out = self.conv3(out)
        out = self.bn3(out)
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        out = self.relu(out)
        return out


class ResNet(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.layer1 = Bottleneck(4, 2)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(4, num_classes)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.layer1(x)
        x = torch.flatten(self.avgpool(x), 1)
        return self.fc(x)


def add_interim_values(module, input, output):
    module.x = input[0].detach()
    module.y = output.detach()


def nonlinear_1d(module, grad_input, grad_output):
    delta_out = module.y[: int(module.y.shape[0] / 2)] - module.y[int(module.y.shape[0] / 2):]
    delta_in = module.x[: int(module.x.shape[0] / 2)] - module.x[int(module.x.shape[0] / 2):]
    if delta_in.shape[1:] != grad_output[0].shape[1:]:
        return grad_input
    dup0 = [2] + [1 for i in delta_in.shape[1:]]
    grads = [None for _ in grad_input]
    grads[0] = torch.where(torch.abs(delta_in.repeat(dup0)) < 1e-6, grad_input[0],
                           grad_output[0] * (delta_out / delta_in).repeat(dup0))
    return tuple(grads)


class PyTorchDeep:
    def __init__(self, model, data):
        self.model = model.eval()
        self.data = data
        self.handles = []

    def add_handles(self, model):
        for child in model.children():
            if len(list(child.children())) > 0:
                self.add_handles(child)
            elif isinstance(child, nn.ReLU):
                self.handles.append(child.register_forward_hook(add_interim_values))
                self.handles.append(child.register_full_backward_hook(nonlinear_1d))

    def gradient(self, idx, inputs):
        self.model.zero_grad()
        X = inputs.clone().requires_grad_()
        outputs = self.model(X)
        selected = outputs[:, idx].sum()
        return torch.autograd.grad(selected, X)[0]

    def shap_values(self, X):
        self.add_handles(self.model)
        joint_x = torch.cat([X, self.data], dim=0)
        sample_phis = self.gradient(0, joint_x)
        for h in self.handles:
            h.remove()
        return (sample_phis[: X.shape[0]] * (X - self.data)).detach()


model = ResNet()
background = torch.rand(2, 3, 6, 6)
test_images = torch.rand(2, 3, 6, 6)
e = PyTorchDeep(model, background)
shap_values = e.shap_values(test_images)
