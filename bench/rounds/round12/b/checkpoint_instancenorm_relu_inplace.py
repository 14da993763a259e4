# label: safe
# why: the checkpointed block ends in an in-place ReLU right after InstanceNorm; on current torch the checkpoint recomputes it and x still receives the same gradient as with ReLU(inplace=False)
# source: https://github.com/pytorch/pytorch/issues/26546
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)

x = torch.randn(3, 2, 6, requires_grad=True)

model = nn.Sequential(
    nn.InstanceNorm1d(2),
    nn.ReLU(inplace=True),
)
y = checkpoint(model, x, use_reentrant=True)

y.norm().backward()

x_grad = x.grad
