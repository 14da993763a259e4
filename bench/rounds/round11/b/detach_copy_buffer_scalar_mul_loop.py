# label: safe
# why: the buffer x is detached and refilled with copy_ each iteration; multiplying by a Python scalar saves nothing of x, so the refill never clobbers data that backward needs (this once raised on older releases).
# source: https://github.com/pytorch/pytorch/issues/15115
import torch

torch.manual_seed(0)

mu = torch.ones(1, requires_grad=True)
x = torch.randn(1)
loss = 0
for _ in range(3):
    x.detach_()
    new_calc = torch.exp(mu)
    x.copy_(new_calc)
    loss += (x * 2).sum()
loss.backward()
