# label: hazard raises
# why: register_full_backward_hook wraps each Linear output in a BackwardHookFunction view, and the following nn.ReLU(inplace=True) then modifies that view in place, which autograd forbids
# source: https://github.com/tfjgeorge/nngeometry/pull/42
import torch
import torch.nn as nn

torch.manual_seed(0)


class Jacobian:
    """Collects per-example gradients of the output w.r.t. Linear weights, nngeometry style."""

    def __init__(self, model):
        self.model = model
        self.xs = dict()
        self.gys = dict()
        self.handles = []
        for name, mod in model.named_modules():
            if isinstance(mod, nn.Linear):
                self.handles.append(mod.register_forward_hook(self._hook_savex(name)))
                self.handles.append(mod.register_full_backward_hook(self._hook_compute_flat_grad(name)))

    def _hook_savex(self, name):
        def hook(mod, input, output):
            self.xs[name] = input[0].detach()
        return hook

    def _hook_compute_flat_grad(self, name):
        def hook(mod, grad_input, grad_output):
            self.gys[name] = grad_output[0].detach()
        return hook

    def per_example_grads(self, x):
        out = self.model(x)
        out.sum().backward()
        grads = {}
        for name in self.xs:
            grads[name] = torch.einsum('bo,bi->boi', self.gys[name], self.xs[name])
        return grads


def make_mlp(sizes):
    layers = []
    for i in range(len(sizes) - 2):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        layers.append(nn.ReLU(inplace=True))  # <-- IPL001: in-place ReLU on the backward-hook view of the Linear output
    layers.append(nn.Linear(sizes[-2], sizes[-1]))
    return nn.Sequential(*layers)


model = make_mlp([5, 8, 8, 2])
jac = Jacobian(model)
x = torch.randn(4, 5)
grads = jac.per_example_grads(x)
g0 = grads['0']
