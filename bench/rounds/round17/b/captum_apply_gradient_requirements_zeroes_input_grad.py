# label: hazard silent
# why: apply_gradient_requirements/undo_gradient_requirements zero the caller's input.grad in place, so a gradient the training loop had already accumulated on the input (and kept a reference to) is silently wiped by computing an attribution.
# source: https://github.com/pytorch/captum/commit/35f7af532b3887c463151d9f3f1aa9d45dc4c8ee
import warnings

import torch
import torch.nn as nn

torch.manual_seed(0)


def apply_gradient_requirements(inputs):
    grad_required = []
    for index, input in enumerate(inputs):
        grad_required.append(input.requires_grad)
        if not input.requires_grad:
            warnings.warn("Input Tensor %d did not already require gradients, required_grads has been set automatically." % index)
            input.requires_grad_()
        if input.grad is not None:
            if torch.sum(torch.abs(input.grad)).item() > 1e-7:
                warnings.warn("Input Tensor %d had a non-zero gradient tensor, which is being reset to 0." % index)
            input.grad.zero_()  # <-- IPL004: wipes the caller's accumulated input gradient in place
    return grad_required


def undo_gradient_requirements(inputs, grad_required):
    for index, input in enumerate(inputs):
        if input.grad is not None:
            input.grad.detach_()
            input.grad.zero_()  # <-- IPL004: wipes the caller's accumulated input gradient in place
        if not grad_required[index]:
            input.requires_grad_(False)


def _run_forward(forward_fn, inputs, target):
    output = forward_fn(*inputs)
    return output[:, target] if target is not None else output


def compute_gradients(forward_fn, inputs, target_ind=None):
    with torch.autograd.set_grad_enabled(True):
        outputs = _run_forward(forward_fn, inputs, target_ind)
        grads = torch.autograd.grad(torch.unbind(outputs), inputs)
    return grads


class Saliency:
    def __init__(self, forward_func):
        self.forward_func = forward_func

    def attribute(self, inputs, target=None, abs=True):
        inputs = (inputs,) if isinstance(inputs, torch.Tensor) else inputs
        gradient_mask = apply_gradient_requirements(inputs)
        gradients = compute_gradients(self.forward_func, inputs, target)
        attributions = tuple(torch.abs(g) if abs else g for g in gradients)
        undo_gradient_requirements(inputs, gradient_mask)
        return attributions[0]


model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 3))
x = torch.randn(4, 5, requires_grad=True)
y = torch.tensor([0, 2, 1, 0])
loss = nn.functional.cross_entropy(model(x), y)
loss.backward()
input_grad = x.grad
saliency = Saliency(model).attribute(x, target=1)
fgsm_x = (x + 0.1 * input_grad.sign()).detach()
