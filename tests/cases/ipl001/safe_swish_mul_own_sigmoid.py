# label: safe
# why: h.mul_(torch.sigmoid(h)) looks like it clobbers a saved tensor, but sigmoid saves its output, and mul_ keeps its own copy of h's old value
import torch
import torch.nn as nn

torch.manual_seed(0)


class MemoryEfficientSwish(nn.Module):
    def forward(self, x):
        h = x * 1.0
        h.mul_(torch.sigmoid(h))
        return h


net = nn.Sequential(nn.Linear(4, 6), MemoryEfficientSwish(), nn.Linear(6, 2))
x = torch.randn(3, 4)
out = net(x)
loss = out.sum()
loss.backward()
