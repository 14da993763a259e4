# label: safe
# why: w_init is a detached clone of the weight, so scaling it in place touches neither the parameter nor the graph
import torch
import torch.nn as nn

torch.manual_seed(0)

layer = nn.Linear(4, 4)
w_init = layer.weight.detach().clone()
w_init.mul_(0.5)

x = torch.randn(3, 4)
out = layer(x)
anchor = (layer.weight - w_init).pow(2).sum()
loss = out.sum() + 0.01 * anchor
loss.backward()
