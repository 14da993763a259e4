# label: safe no-twin
# why: the hand-written SGD step and gradient zeroing run under torch.no_grad() after backward, the standard way to update leaf weights.
import torch

torch.manual_seed(0)
x = torch.randn(32, 3)
y = x @ torch.tensor([[1.5], [-2.0], [0.5]]) + 0.3
w = torch.zeros(3, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
lr = 0.1

for step in range(5):
    pred = x @ w + b
    loss = (pred - y).pow(2).mean()
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
        b -= lr * b.grad
        w.grad.zero_()
        b.grad.zero_()
