# label: safe
# why: Swish.backward does its in-place arithmetic on a local derivative tensor built from the saved input, so the retained graph can be backpropagated twice.
import torch
import torch.nn as nn

torch.manual_seed(0)


class Swish(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        s = torch.sigmoid(x)
        d = x * (1 - s)
        d.add_(1)
        d.mul_(s)
        return grad_output * d


fc = nn.Linear(8, 8)
head_a = nn.Linear(8, 1)
head_b = nn.Linear(8, 3)
inp = torch.randn(4, 8)
h = Swish.apply(fc(inp))
loss_a = head_a(h).pow(2).mean()
loss_b = head_b(h).logsumexp(-1).mean()
loss_a.backward(retain_graph=True)
loss_b.backward()
