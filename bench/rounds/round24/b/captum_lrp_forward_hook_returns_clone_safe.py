# label: safe
# why: the LRP forward hook returns `outputs.clone()`, so the following ReLU(inplace=True) rectifies the clone while the backward hooks keep reading the untouched linear outputs captured through `.data`.
# source: https://github.com/pytorch/captum/commit/7204dc08f44c5145ce0103c63e857bd00fc149cd
import torch
import torch.nn as nn

torch.manual_seed(0)


class PropagationRule:
    """Base class for all propagation rule classes, also called Z-Rule."""

    STABILITY_FACTOR = 1e-9

    def forward_hook(self, module, inputs, outputs):
        """Register backward hooks on input and output
        tensors of linear layers in the model."""
        self._handle_input_hooks = []
        self.relevance_input = []
        for input in inputs:
            if not hasattr(input, "hook_registered"):
                input_hook = self._create_backward_hook_input(input.data)
                self._handle_input_hooks.append(input.register_hook(input_hook))
                input.hook_registered = True
        output_hook = self._create_backward_hook_output(outputs.data)
        self._handle_output_hook = outputs.register_hook(output_hook)
        return outputs.clone()

    def _create_backward_hook_input(self, inputs):
        def _backward_hook_input(grad):
            relevance = grad * inputs
            self.relevance_input.append(relevance.data)
            return relevance

        return _backward_hook_input

    def _create_backward_hook_output(self, outputs):
        def _backward_hook_output(grad):
            sign = torch.sign(outputs)
            sign[sign == 0] = 1
            relevance = grad / (outputs + sign * self.STABILITY_FACTOR)
            self.relevance_output = grad.data
            return relevance

        return _backward_hook_output


class EpsilonRule(PropagationRule):
    def __init__(self, epsilon=1e-9):
        self.STABILITY_FACTOR = epsilon


class SimpleLRPModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 6)
        self.relu = nn.ReLU(inplace=True)
        self.linear2 = nn.Linear(6, 3)

    def forward(self, x):
        return self.linear2(self.relu(self.linear(x)))


def main():
    model = SimpleLRPModel()
    rules = {}
    handles = []
    for name, layer in [("linear", model.linear), ("linear2", model.linear2)]:
        rule = EpsilonRule(epsilon=1e-2)
        rules[name] = rule
        handles.append(layer.register_forward_hook(rule.forward_hook))

    inputs = torch.randn(2, 4, requires_grad=True)
    output = model(inputs)
    target = 1
    output[:, target].sum().backward()

    for h in handles:
        h.remove()
    return rules["linear"].relevance_input[0], inputs.grad


relevance_at_input, input_grad = main()
