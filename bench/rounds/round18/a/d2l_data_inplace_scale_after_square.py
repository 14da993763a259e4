# label: hazard silent
# why: x.data *= 100 rescales x behind autograd's back after y = x ** 2 saved it, so y.backward() silently returns 2 * 100 * x instead of the gradient at the value that produced y.
# source: https://github.com/ShusenTang/Dive-into-DL-PyTorch/issues/126
import torch

torch.manual_seed(0)


def forward_and_rescale(x, scale):
    y = x ** 2
    x.data *= scale  # <-- IPL007: .data write to x after pow saved it for backward; the gradient uses the rescaled value
    return y


x = torch.ones(1, requires_grad=True)

y = forward_and_rescale(x, 100)
y.backward()
x_grad = x.grad.clone()
