# label: hazard silent
# why: for excluded non-linear layers the forward hook keeps the layer output itself instead of a clone, and the block's in-place residual add then overwrites that saved activation, so grad x activation attributions are computed on the post-residual values
# source: https://github.com/pytorch/captum/pull/415 (commit 9bcf257f9b3811230f370ced1b0801d8df5aa9ee)
import threading
import typing
from typing import List, Union

import torch
import torch.nn as nn

torch.manual_seed(0)


def _forward_layer_distributed_eval(forward_fn, inputs, layer, attribute_to_layer_input: bool = False,
                                    forward_hook_with_return_excl_modules: Union[None, List[typing.Type[nn.Module]]] = None,
                                    forward_hook_with_return: bool = False):
    saved_layer = {}
    is_eval_tuple = False
    lock = threading.Lock()

    def forward_hook(module, inp, out=None):
        nonlocal is_eval_tuple
        eval_tsrs = inp if attribute_to_layer_input else out
        is_eval_tuple = isinstance(eval_tsrs, tuple)
        if not is_eval_tuple:
            eval_tsrs = (eval_tsrs,)
        with lock:
            nonlocal saved_layer
            if forward_hook_with_return:
                saved_layer[eval_tsrs[0].device] = eval_tsrs
                eval_tsrs_to_return = tuple(eval_tsr.clone() for eval_tsr in eval_tsrs)
                if not is_eval_tuple:
                    eval_tsrs_to_return = eval_tsrs_to_return[0]
                if forward_hook_with_return_excl_modules is None or type(module) not in forward_hook_with_return_excl_modules:
                    return eval_tsrs_to_return
            else:
                saved_layer[eval_tsrs[0].device] = tuple(eval_tsr.clone() for eval_tsr in eval_tsrs)

    hook = None
    try:
        if attribute_to_layer_input:
            hook = layer.register_forward_pre_hook(forward_hook)
        else:
            hook = layer.register_forward_hook(forward_hook)
        output = forward_fn(inputs)
    finally:
        if hook is not None:
            hook.remove()
    if forward_hook_with_return:
        return saved_layer, output, is_eval_tuple
    return saved_layer, is_eval_tuple


class ResidualBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc1 = nn.Linear(dim, dim)
        self.relu1 = nn.ReLU()
        self.shortcut = nn.Linear(dim, dim)

    def forward(self, x):
        out = self.relu1(self.fc1(x))
        out += self.shortcut(x)  # <-- IPL002, IPL006: overwrites relu1's output, which the hook kept as the attribution target
        return out


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = ResidualBlock(4)
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.block(x))


def layer_gradient_x_activation(model, inputs, layer, target):
    saved_layer, output, _ = _forward_layer_distributed_eval(
        model, inputs, layer,
        forward_hook_with_return_excl_modules=[nn.ReLU, nn.Tanh, nn.Sigmoid],
        forward_hook_with_return=True,
    )
    layer_eval = saved_layer[inputs.device]
    grads = torch.autograd.grad(output[:, target].sum(), layer_eval)
    return tuple(g * a for g, a in zip(grads, layer_eval))


model = Net()
inputs = torch.randn(3, 4)
attributions = layer_gradient_x_activation(model, inputs, model.block.relu1, target=1)[0]
