# label: hazard raises
# why: the attribution hooks wrap every layer with register_full_backward_hook, whose BackwardHookFunction output is then rewritten by the in-place ReLU, which autograd forbids
# source: https://github.com/meta-pytorch/captum/pull/837 (in-place modules no longer supported for full backward hooks; test_lrp_simple_inplaceReLU removed)
import torch
import torch.nn as nn

torch.manual_seed(0)


class SimpleLRPModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 3, bias=False)
        self.relu = nn.ReLU(inplace=True)  # <-- IPL001: in-place activation inside a module wrapped by a full backward hook
        self.linear2 = nn.Linear(3, 1, bias=False)

    def forward(self, x):
        return self.linear2(self.relu(self.linear(x)))


class EpsilonRule:
    def __init__(self, epsilon=1e-9):
        self.epsilon = epsilon
        self.relevance_input = {}

    def forward_hook(self, module, inputs, outputs):
        module._lrp_inputs = inputs[0].detach()
        module._lrp_outputs = outputs.detach()

    def backward_hook(self, module, grad_input, grad_output):
        z = module._lrp_outputs
        stabilizer = self.epsilon * torch.where(z >= 0, torch.ones_like(z), -torch.ones_like(z))
        self.relevance_input[module] = grad_output[0] * z / (z + stabilizer)
        return grad_input


class LRP:
    def __init__(self, model):
        self.model = model
        self.rule = EpsilonRule()
        self.handles = []

    def _register_hooks(self):
        for layer in self.model.children():
            self.handles.append(layer.register_forward_hook(self.rule.forward_hook))
            self.handles.append(layer.register_full_backward_hook(self.rule.backward_hook))

    def attribute(self, inputs):
        self._register_hooks()
        try:
            inputs = inputs.clone().requires_grad_()
            output = self.model(inputs)
            grads = torch.autograd.grad(output.sum(), inputs)[0]
        finally:
            for h in self.handles:
                h.remove()
        return grads * inputs


model = SimpleLRPModel()
inputs = torch.tensor([[1.0, 2.0, 3.0]])
lrp = LRP(model)
relevance = lrp.attribute(inputs)
