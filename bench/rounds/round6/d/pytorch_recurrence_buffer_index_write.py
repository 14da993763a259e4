# label: hazard raises
# why: the recurrence f(n) = sigmoid(f(n-1) * x) is stored into one preallocated buffer; f[i-1] * x saved a view of f, and every later f[i] = ... write bumps the buffer's version
# source: https://github.com/pytorch/pytorch/issues/36470
import torch

torch.manual_seed(0)

x = torch.ones(1)
x.requires_grad_()
a = 1
f = torch.zeros(10)
f[0] = a
for i in range(1, 10):
    prev = f[i - 1] * x
    f[i] = prev  # <-- IPL001: writes into f, whose slice f[i-1] was just saved by the multiply
    f[i] = 1 / (1.0 + torch.exp(-f[i]))  # <-- IPL001: overwrites f in place again while views of f are saved
loss = torch.sum(f)
grad = torch.autograd.grad(loss, [x])[0]
