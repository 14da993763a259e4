# label: hazard raises
# why: wt = w.t() is a view of the tanh output; scaling the transposed view in place corrupts TanhBackward's saved result
import torch
import torch.nn as nn

torch.manual_seed(0)

raw = nn.Parameter(torch.randn(4, 3))
x = torch.randn(5, 4)

w = torch.tanh(raw)
wt = w.t()
wt.mul_(0.5)  # <-- IPL001
y = x @ w
loss = y.sum()
loss.backward()
