# label: hazard silent
# why: rescaling through .detach() changes the hidden values used downstream but autograd still treats that step as identity, so the gradient misses the 1/norm factor
import torch
import torch.nn as nn

torch.manual_seed(0)
layer1 = nn.Linear(5, 7)
layer2 = nn.Linear(7, 1)
x = torch.randn(10, 5)
y = torch.randn(10, 1)

h = layer1(x)
norm = h.norm(dim=1, keepdim=True).detach() + 1e-6
h.detach().div_(norm)  # <-- IPL007
out = layer2(h)
loss = ((out - y) ** 2).mean()
loss.backward()

l1_grad = layer1.weight.grad.clone()
l2_grad = layer2.weight.grad.clone()
final_loss = loss.detach()
