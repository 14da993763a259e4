# label: hazard raises
# why: per-layer full backward hooks on every Linear return each Linear output through BackwardHookFunction; the ReLU(inplace=True) the loop appends after each Linear then writes that view in place.
import torch
import torch.nn as nn

torch.manual_seed(0)


def make_mlp(sizes):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU(inplace=True))  # <-- IPL001: writes the hooked Linear's output view
    return nn.Sequential(*layers)


class GradOutputs:
    def __init__(self, model):
        self.grads = {}
        for name, module in model.named_modules():
            if isinstance(module, nn.Linear):
                module.register_full_backward_hook(self._keep(name))

    def _keep(self, name):
        def hook(module, grad_input, grad_output):
            self.grads[name] = grad_output[0].detach()

        return hook


model = make_mlp([4, 8, 8, 2])
collector = GradOutputs(model)
x = torch.randn(3, 4)
loss = model(x).pow(2).sum()
loss.backward()
