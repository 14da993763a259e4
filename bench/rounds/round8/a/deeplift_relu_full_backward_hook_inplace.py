# label: hazard raises
# why: the attribution method registers full backward hooks on every ReLU module to override its gradient, and an in-place ReLU then modifies the BackwardHookFunction view of its own input.
# source: https://github.com/meta-pytorch/captum/issues/914
import torch
import torch.nn as nn

torch.manual_seed(0)


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 2, 3)
        self.relu1 = nn.ReLU(inplace=True)  # <-- IPL001: in-place ReLU on a module wrapped by full backward hooks
        self.conv2 = nn.Conv2d(2, 2, 3)
        self.relu2 = nn.ReLU(inplace=True)  # <-- IPL001: in-place ReLU on a module wrapped by full backward hooks
        self.fc = nn.Linear(2, 3)

    def forward(self, x):
        x = self.relu1(self.conv1(x))
        x = self.relu2(self.conv2(x))
        return self.fc(x.mean((2, 3)))


class DeepLiftRescale:
    def __init__(self, model):
        self.model = model
        self.forward_handles = []
        self.backward_handles = []

    def _register_hooks(self, module):
        if isinstance(module, nn.ReLU):
            self.forward_handles.append(module.register_forward_hook(self._forward_hook))
            self.backward_handles.append(module.register_full_backward_hook(self._backward_hook))

    def _forward_hook(self, module, inputs, outputs):
        module.input = inputs[0].clone().detach()
        module.output = outputs.clone().detach()

    def _backward_hook(self, module, grad_input, grad_output):
        delta_in = module.input - module.input.mean(0, keepdim=True)
        delta_out = module.output - module.output.mean(0, keepdim=True)
        multipliers = torch.where(delta_in.abs() < 1e-10, grad_input[0], grad_output[0] * delta_out / delta_in)
        return (multipliers,)

    def attribute(self, inputs, baselines, target):
        self.model.apply(self._register_hooks)
        both = torch.cat([inputs, baselines])
        both.requires_grad_(True)
        out = self.model(both)
        out[: inputs.shape[0], target].sum().backward()
        grads = both.grad[: inputs.shape[0]]
        for h in self.forward_handles + self.backward_handles:
            h.remove()
        return (inputs - baselines) * grads


model = ConvNet().eval()
dl = DeepLiftRescale(model)
inputs = torch.rand(2, 1, 7, 7)
baselines = torch.zeros(2, 1, 7, 7)
attributions = dl.attribute(inputs, baselines, target=1)
