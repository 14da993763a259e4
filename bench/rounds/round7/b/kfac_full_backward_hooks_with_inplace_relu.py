# label: hazard raises
# why: the K-FAC statistics collector installs full backward hooks on each Linear layer, which wrap the layer output in a BackwardHookFunction view, and the following nn.ReLU(inplace=True) then modifies that view in place.
# source: https://github.com/pytorch/pytorch/issues/61519
import torch
import torch.nn as nn

torch.manual_seed(0)


class KFACStatistics:
    """Collects layer inputs (A factors) and output gradients (G factors) for a K-FAC / Laplace approximation."""

    def __init__(self, model, decay=0.95):
        self.decay = decay
        self.a_factors = {}
        self.g_factors = {}
        self.handles = []
        for name, module in model.named_modules():
            if isinstance(module, nn.Linear):
                self.handles.append(module.register_forward_hook(self._save_input(name)))
                self.handles.append(module.register_full_backward_hook(self._save_grad_output(name)))

    def _update(self, store, name, value):
        if name not in store:
            store[name] = value
        else:
            store[name] = self.decay * store[name] + (1 - self.decay) * value

    def _save_input(self, name):
        def hook(module, inputs, output):
            a = inputs[0].detach()
            a = torch.cat([a, a.new_ones(a.size(0), 1)], dim=1)
            self._update(self.a_factors, name, a.t() @ a / a.size(0))
        return hook

    def _save_grad_output(self, name):
        def hook(module, grad_input, grad_output):
            g = grad_output[0].detach()
            self._update(self.g_factors, name, g.t() @ g * g.size(0))
        return hook

    def remove(self):
        for handle in self.handles:
            handle.remove()


def make_mlp(sizes):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU(inplace=True))  # <-- IPL001: in-place on the view produced by the full backward hook
    return nn.Sequential(*layers)


model = make_mlp([6, 8, 8, 3])
stats = KFACStatistics(model)
x = torch.randn(5, 6)
y = torch.tensor([0, 2, 1, 1, 0])
loss = nn.functional.cross_entropy(model(x), y)
loss.backward()
g_first = stats.g_factors["0"]
