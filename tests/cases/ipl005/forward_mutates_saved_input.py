# label: hazard raises
# why: the custom forward rescales its input in place (no mark_dirty); that input is an exp() output already saved by ExpBackward
import torch
import torch.nn as nn

torch.manual_seed(0)


class Normalize(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        total = x.sum(dim=-1, keepdim=True)
        x.div_(total)  # <-- IPL005
        ctx.save_for_backward(x, total)
        return x.clone()

    @staticmethod
    def backward(ctx, grad_output):
        p, total = ctx.saved_tensors
        g = (grad_output - (grad_output * p).sum(-1, keepdim=True)) / total
        return g


scorer = nn.Linear(3, 4)
x = torch.randn(2, 3)
weights = torch.exp(scorer(x))
probs = Normalize.apply(weights)
loss = (probs * torch.arange(4.0)).sum()
loss.backward()
