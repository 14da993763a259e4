# label: safe
# why: the manual parameter update on leaves happens inside torch.no_grad(), after backward has finished.
import torch

torch.manual_seed(0)

x = torch.randn(20, 3)
y = x @ torch.tensor([[2.0], [-1.0], [0.5]]) + 0.3

w = torch.randn(3, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
lr = 0.1

pred = x @ w + b
loss = ((pred - y) ** 2).mean()
loss.backward()
with torch.no_grad():
    w -= lr * w.grad
    b -= lr * b.grad
w.grad = None
b.grad = None
new_loss = ((x @ w + b - y) ** 2).mean()
