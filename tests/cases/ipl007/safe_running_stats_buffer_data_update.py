# label: safe
# why: the custom norm layer updates its running-mean buffer through .data from a detached batch mean; the buffer is not part of the training graph, so the write cannot corrupt any gradient.
import torch
import torch.nn as nn

torch.manual_seed(0)


class RunningCenter(nn.Module):
    def __init__(self, dim, momentum=0.1):
        super().__init__()
        self.momentum = momentum
        self.register_buffer("running_mean", torch.zeros(dim))
        self.scale = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        mean = x.mean(dim=0)
        self.running_mean.data.mul_(1 - self.momentum)
        self.running_mean.data.add_(self.momentum * mean.detach())
        return (x - mean) * self.scale


layer = RunningCenter(4)
lin = nn.Linear(3, 4)
for _ in range(3):
    out = layer(lin(torch.randn(6, 3)))
    out.pow(2).mean().backward()
running = layer.running_mean.clone()
scale_grad = layer.scale.grad.clone()
