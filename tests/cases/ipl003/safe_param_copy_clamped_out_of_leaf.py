# label: safe
# why: the in-place clamp_ and masked writes act on w = p.clone() and on a tensor built from it, which are non-leaf results of an op, not the Parameter itself, so autograd records them normally.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

layer = nn.Linear(6, 4)
x = torch.randn(10, 6)
y = torch.randn(10, 4)

w = layer.weight.clone()
w.clamp_(-0.3, 0.3)
w *= 2.0
b = layer.bias * 1.0
b[0] = 0.0

out = F.linear(x, w, b)
loss = F.mse_loss(out, y)
loss.backward()
w_grad = layer.weight.grad.clone()
b_grad = layer.bias.grad.clone()
