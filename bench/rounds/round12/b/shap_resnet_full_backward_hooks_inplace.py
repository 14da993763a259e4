# label: hazard raises
# why: the explainer puts full backward hooks on every module, so each module output is a view returned by BackwardHookFunction; the residual block then mutates those outputs with out += identity and ReLU(inplace=True)
# source: https://github.com/shap/shap/issues/3565 (duplicate of https://github.com/shap/shap/issues/3466)
import torch
import torch.nn as nn

torch.manual_seed(0)


class BasicBlock(nn.Module):
    def __init__(self, inplanes, planes):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)  # <-- IPL001: in-place ReLU applied to outputs that the full backward hooks wrap as views
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)

    def forward(self, x):
        identity = x
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.bn2(out)
        out += identity  # <-- IPL001: bn2's output is a hooked view; += mutates it in place
        out = self.relu(out)
        return out


class TinyResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 4, 3, padding=1)
        self.layer1 = BasicBlock(4, 4)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        x = self.layer1(self.stem(x))
        return self.fc(self.pool(x).flatten(1))


class PyTorchDeep:
    """Reduced from shap's DeepExplainer: record interim values and hook every module's backward."""

    def __init__(self, model):
        self.model = model
        self.handles = []
        self.grads = {}
        for name, module in model.named_modules():
            if len(list(module.children())) == 0:
                self.handles.append(module.register_forward_hook(self.add_interim_values))
                self.handles.append(module.register_full_backward_hook(self.make_grad_hook(name)))

    @staticmethod
    def add_interim_values(module, input, output):
        module.x = input[0].detach()
        module.y = output.detach()

    def make_grad_hook(self, name):
        def deeplift_grad(module, grad_input, grad_output):
            self.grads[name] = grad_output[0].detach()
        return deeplift_grad

    def shap_values(self, X):
        X = X.clone().requires_grad_()
        out = self.model(X)
        selected = out[:, 0].sum()
        grads = torch.autograd.grad(selected, X)[0]
        for h in self.handles:
            h.remove()
        return grads * X.detach()


model = TinyResNet().eval()
explainer = PyTorchDeep(model)
background = torch.randn(2, 3, 6, 6)
shap_values = explainer.shap_values(background)
