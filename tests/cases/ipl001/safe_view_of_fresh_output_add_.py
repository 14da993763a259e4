# label: safe
# why: in-place writes through views of fresh outputs (a Linear reshaped with .view, a torch.cat result); neither addmm nor cat saves its output
import torch
import torch.nn as nn

torch.manual_seed(0)

proj = nn.Linear(4, 6)
pos = nn.Parameter(torch.randn(1, 2, 3))
x = torch.randn(5, 4)
extra = torch.randn(5, 2, requires_grad=True)

heads = proj(x).view(5, 2, 3)
heads.add_(pos)
both = torch.cat([heads.flatten(1), extra], dim=1)
both.mul_(0.5)
loss = torch.tanh(both).sum()
loss.backward()
