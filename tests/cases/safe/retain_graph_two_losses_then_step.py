# label: safe
# why: two backward passes share one graph with retain_graph=True, and optimizer.step() only runs after the last backward
import torch
import torch.nn as nn

torch.manual_seed(0)

shared = nn.Sequential(nn.Linear(4, 6), nn.ReLU(inplace=True))
head_a = nn.Linear(6, 1)
head_b = nn.Linear(6, 2)
opt = torch.optim.SGD(list(shared.parameters()) + list(head_a.parameters()) + list(head_b.parameters()), lr=0.1)
x = torch.randn(5, 4)

h = shared(x)
loss_a = head_a(h).pow(2).mean()
loss_b = head_b(h).abs().mean()
opt.zero_grad()
loss_a.backward(retain_graph=True)
loss_b.backward()
opt.step()
