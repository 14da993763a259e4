# label: safe
# why: the custom Function clones its output as the error message advises, so the later in-place mul_ on z no longer touches anything backward needs
# source: https://github.com/pytorch/pytorch/issues/73604
import torch
from torch.autograd import Function


class Alias(Function):
    @staticmethod
    def forward(ctx, input):
        return input[:].clone()

    @staticmethod
    def backward(ctx, grad):
        return grad


base = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
z = base * 1
x = Alias.apply(z)
z.mul_(-1)
loss = x.sum()
loss.backward()
base_grad = base.grad
neg = z.detach()
