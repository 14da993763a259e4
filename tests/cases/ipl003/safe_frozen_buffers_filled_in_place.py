# label: safe
# why: the in-place writes go to requires_grad=False buffers (running statistics and a frozen mask) while the trainable Parameter is only read, so there is no leaf that requires grad being modified.
import torch
import torch.nn as nn

torch.manual_seed(0)

lin = nn.Linear(5, 3)
running_mean = torch.zeros(5)
running_sq = torch.zeros(5)
seen = torch.zeros(())
mask = torch.ones(5, requires_grad=False)
momentum = 0.1

for step in range(4):
    x = torch.randn(8, 5)
    batch_mean = x.mean(0)
    running_mean.mul_(1 - momentum)
    running_mean.add_(batch_mean, alpha=momentum)
    running_sq += momentum * (x.pow(2).mean(0) - running_sq)
    seen += 1

mask[2] = 0.0
x = torch.randn(8, 5)
x_norm = (x - running_mean) / (running_sq - running_mean.pow(2)).clamp(min=1e-5).sqrt()
out = lin(x_norm * mask)
out.pow(2).mean().backward()
w_grad = lin.weight.grad.clone()
