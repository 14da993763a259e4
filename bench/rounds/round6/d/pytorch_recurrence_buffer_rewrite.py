# label: safe
# why: the reporter's rewrite recomputes each term from x and a, so the f[i] = tmp writes land in a buffer whose old contents no backward formula needs (only the final sum reads it)
# source: https://github.com/pytorch/pytorch/issues/36470
import torch

torch.manual_seed(0)

x = torch.ones(1)
x.requires_grad_()
a = 1
f = torch.zeros(10)
f[0] = a
for i in range(1, 10):
    tmp = a
    for j in range(i):
        tmp = 1 / (1.0 + torch.exp(-(a * x)))
    f[i] = tmp
loss = torch.sum(f)
grad = torch.autograd.grad(loss, [x])[0]
