# label: hazard raises
# why: the memory-saving InPlaceAdd Function adds messages into a slice of its input inside forward without ctx.mark_dirty; the input is a sigmoid output that SigmoidBackward saved, so backward finds it modified.
# source: https://github.com/pytorch/pytorch/issues/5871
import torch
import torch.nn as nn
from torch.autograd import Function

torch.manual_seed(0)


class InPlaceAdd(Function):
    @staticmethod
    def forward(ctx, a, b, start, stop):
        a[start:stop] += b  # <-- IPL005, IPL001: mutates the input a in forward without ctx.mark_dirty; a was saved by sigmoid
        ctx.start, ctx.stop = start, stop
        return a

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, grad_output[ctx.start:ctx.stop], None, None


add_in_place = InPlaceAdd.apply


class NodeUpdater(nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        self.gate = nn.Linear(dim, dim)
        self.msg = nn.Linear(dim, dim)

    def forward(self, h, edges):
        state = torch.sigmoid(self.gate(h))
        for (src, dst) in edges:
            state = add_in_place(state, self.msg(h[src:src + 1]), dst, dst + 1)
        return state


model = NodeUpdater()
h = torch.randn(5, 4)
edges = [(0, 1), (1, 2), (3, 4)]
out = model(h, edges)
loss = out.pow(2).sum()
loss.backward()
