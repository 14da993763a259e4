# label: hazard raises
# why: Alias returns a view of its input from inside a custom Function; mutating the base z afterwards makes backward through the view illegal
# source: https://github.com/pytorch/pytorch/issues/73604
import torch
from torch.autograd import Function


class Alias(Function):
    @staticmethod
    def forward(ctx, input):
        return input[:]

    @staticmethod
    def backward(ctx, grad):
        return grad


def run():
    base = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    z = base * 1
    x = Alias.apply(z)
    z.mul_(-1)  # <-- IPL002: z is the base of the view x returned by the custom Function; x is used again below
    loss = x.sum()
    loss.backward()
    return base


base = run()
base_grad = base.grad
