# label: safe
# why: the fixed mod_params installs a fresh nn.Parameter holding the modified weights and later restores the original Parameter object by setattr, so the tensor saved by the Linear backward keeps the modified values and the Gamma-rule relevance is correct.
# source: https://github.com/chr5tphr/zennit/commit/1ca27df2d4f9fa7148448e1fc7b3d106caf97d14 (zennit/core.py after the fix)
from contextlib import contextmanager

import torch

torch.manual_seed(0)


def stabilize(input, epsilon=1e-6):
    return input + ((input == 0.).to(input) + input.sign()) * epsilon


@contextmanager
def mod_params(module, modifier, param_keys=None, require_params=True):
    try:
        stored_params = {}
        if param_keys is None:
            param_keys = [name for name, _ in module.named_parameters(recurse=False)]

        missing = [key for key in param_keys if not hasattr(module, key)]
        if require_params and missing:
            raise RuntimeError("Module {} requires missing parameters: '{}'".format(module, "', '".join(missing)))

        for key in param_keys:
            if key not in missing:
                param = getattr(module, key)
                if param is not None:
                    stored_params[key] = param
                    setattr(module, key, torch.nn.Parameter(modifier(param.data, key)))
        yield module
    finally:
        for key, value in stored_params.items():
            setattr(module, key, value)


class BasicHook:
    def __init__(self, input_modifiers=None, param_modifiers=None, output_modifiers=None,
                 gradient_mapper=None, reducer=None, param_keys=None, require_params=True):
        self.stored_tensors = {}
        modifiers = {'in': input_modifiers, 'param': param_modifiers, 'out': output_modifiers}
        supplied = {key for key, val in modifiers.items() if val is not None}
        num_mods = len(modifiers[next(iter(supplied))]) if supplied else 1
        modifiers.update({key: (self._default_modifier,) * num_mods for key in set(modifiers) - supplied})
        self.input_modifiers = modifiers['in']
        self.param_modifiers = modifiers['param']
        self.output_modifiers = modifiers['out']
        self.gradient_mapper = gradient_mapper if gradient_mapper is not None else self._default_gradient_mapper
        self.reducer = reducer if reducer is not None else self._default_reducer
        self.param_keys = param_keys
        self.require_params = require_params

    def forward(self, module, input, output):
        self.stored_tensors['input'] = input

    def backward(self, module, grad_input, grad_output):
        original_input = self.stored_tensors['input'][0].detach()
        param_kwargs = dict(param_keys=self.param_keys, require_params=self.require_params)
        inputs = []
        outputs = []
        for in_mod, param_mod, out_mod in zip(self.input_modifiers, self.param_modifiers, self.output_modifiers):
            input = in_mod(original_input).requires_grad_()
            with mod_params(module, param_mod, **param_kwargs) as modified, torch.autograd.enable_grad():
                output = modified.forward(input)
                output = out_mod(output)
            inputs.append(input)
            outputs.append(output)
        gradients = torch.autograd.grad(outputs, inputs, grad_outputs=self.gradient_mapper(grad_output[0], outputs))
        relevance = self.reducer(inputs, gradients)
        return tuple(relevance if original.shape == relevance.shape else None for original in grad_input)

    @staticmethod
    def _default_modifier(obj, name=None):
        return obj

    @staticmethod
    def _default_gradient_mapper(out_grad, outputs):
        return tuple(out_grad / stabilize(output) for output in outputs)

    @staticmethod
    def _default_reducer(inputs, gradients):
        return sum(input * gradient for input, gradient in zip(inputs, gradients))


class Gamma(BasicHook):
    def __init__(self, gamma=0.25):
        super().__init__(param_modifiers=[lambda param, _: param + gamma * param.clamp(min=0)])


def main():
    model = torch.nn.Sequential(
        torch.nn.Conv2d(1, 4, 3), torch.nn.ReLU(),
        torch.nn.Conv2d(4, 4, 3), torch.nn.ReLU(),
        torch.nn.Flatten(), torch.nn.Linear(4 * 4 * 4, 3),
    )
    hooks = {0: Gamma(0.25), 2: Gamma(0.25), 5: Gamma(0.25)}
    for idx, hook in hooks.items():
        model[idx].register_forward_hook(hook.forward)
    flatten_shapes = {}
    model[4].register_forward_hook(lambda module, input, output: flatten_shapes.update(shape=input[0].shape))

    data = torch.randn(2, 1, 8, 8)
    with torch.no_grad():
        output = model(data)

    relevance = torch.eye(3)[[0, 2]] * output
    for idx in reversed(range(len(model))):
        module = model[idx]
        if idx in hooks:
            grad_input = (torch.zeros_like(hooks[idx].stored_tensors['input'][0]),)
            relevance = hooks[idx].backward(module, grad_input, (relevance,))[0]
        elif isinstance(module, torch.nn.Flatten):
            relevance = relevance.reshape(flatten_shapes['shape'])
    return output, relevance.detach(), model[0].weight.detach().clone()


output, relevance, first_weight = main()
