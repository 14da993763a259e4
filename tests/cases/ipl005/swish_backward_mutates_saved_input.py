# label: hazard raises
# why: Swish.backward rewrites the saved input in place while computing the derivative, so the second backward through the retained graph finds it at a new version and raises.
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
        x.mul_(1 - s)  # <-- IPL005: saved tensor written in place
        return grad_output * s * (x + 1)


fc = nn.Linear(8, 8)
head_a = nn.Linear(8, 1)
head_b = nn.Linear(8, 3)
inp = torch.randn(4, 8)
h = Swish.apply(fc(inp))
loss_a = head_a(h).pow(2).mean()
loss_b = head_b(h).logsumexp(-1).mean()
loss_a.backward(retain_graph=True)
loss_b.backward()
