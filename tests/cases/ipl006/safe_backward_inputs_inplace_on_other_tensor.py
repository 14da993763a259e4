# label: safe
# why: the in-place op rewrites the fresh head output z, not h; backward(inputs=[h]) is w.r.t. the untouched tensor
import torch
import torch.nn as nn

torch.manual_seed(0)

enc = nn.Linear(4, 3)
head = nn.Linear(3, 2)
x = torch.randn(5, 4)

h = enc(x)
z = head(torch.sigmoid(h))
z.mul_(2.0)
z.sum().backward(inputs=[h])
saliency = h.grad.abs().sum(dim=0)
