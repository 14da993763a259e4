# label: safe
# why: the parameter is frozen (requires_grad=False), so in-place updates to it are ordinary tensor writes
import torch
import torch.nn as nn

torch.manual_seed(0)

frozen_scale = nn.Parameter(torch.ones(4), requires_grad=False)
frozen_scale.mul_(2.0)
frozen_scale[0] = 0.5

head = nn.Linear(4, 2)
x = torch.randn(3, 4)
out = head(x * frozen_scale)
loss = out.pow(2).sum()
loss.backward()
