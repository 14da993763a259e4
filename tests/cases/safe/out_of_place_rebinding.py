# label: safe
# why: `s = s * c` and `h = h + b` rebind names to new tensors (the out-of-place fix for the sigmoid/tanh hazards); `lr *= 0.5` is a Python float
import torch
import torch.nn as nn

torch.manual_seed(0)

fc = nn.Linear(4, 4)
bias = nn.Parameter(torch.randn(4))
x = torch.randn(3, 4)
lr = 0.1

s = torch.sigmoid(fc(x))
s = s * 2.0
h = torch.tanh(s)
h = h + bias
h = h.clamp(max=1.5)
loss = h.pow(2).sum()
loss.backward()
lr *= 0.5
