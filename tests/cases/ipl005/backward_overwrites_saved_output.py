# label: hazard silent
# why: the hand-written sigmoid backward computes y*(1-y) in place on ctx.saved_tensors, overwriting the caller's probabilities
import torch
import torch.nn as nn

torch.manual_seed(0)


class MySigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = 1.0 / (1.0 + torch.exp(-x))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        y.mul_(1.0 - y)  # <-- IPL005
        return grad_output * y


head = nn.Linear(4, 2)
x = torch.randn(3, 4)
probs = MySigmoid.apply(head(x))
loss = (probs * torch.tensor([1.0, -2.0])).sum()
loss.backward()
