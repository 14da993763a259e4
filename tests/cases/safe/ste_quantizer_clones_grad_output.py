# label: safe
# why: the straight-through quantizer rounds a clone in forward and zeroes a cloned grad_output in backward; saved tensors are only read
import torch
import torch.nn as nn


class RoundSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, levels):
        ctx.save_for_backward(x)
        q = x.clone()
        q.mul_(levels).round_().div_(levels)
        return q

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        grad = grad_output.clone()
        grad.masked_fill_(x.abs() > 1.0, 0.0)
        return grad, None


torch.manual_seed(0)
fc = nn.Linear(6, 6)
head = nn.Linear(6, 1)
x = torch.randn(8, 6)

h = fc(x)
hq = RoundSTE.apply(h, 4.0)
out = head(hq) + h.sum(dim=1, keepdim=True)
loss = out.pow(2).mean()
loss.backward()

fc_grad = fc.weight.grad.clone()
head_grad = head.weight.grad.clone()
