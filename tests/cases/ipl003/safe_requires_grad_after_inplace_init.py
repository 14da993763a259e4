# label: safe no-twin
# why: the tensor is filled in place while it does not require grad yet; requires_grad_() is only switched on afterwards
import torch

torch.manual_seed(0)

w = torch.empty(5, 3)
w.uniform_(-0.1, 0.1)
w.requires_grad_()
b = torch.zeros(3, requires_grad=True)

x = torch.randn(4, 5)
y = x @ w + b
loss = y.tanh().sum()
loss.backward()
