# label: safe no-twin
# why: the hand-written SGD step on the requires_grad leaves runs inside `with torch.no_grad():` and then zeroes the grads, which is the documented correct pattern.
import torch

torch.manual_seed(0)

X = torch.randn(40, 2)
y = (X[:, :1] * 2.0 - X[:, 1:] + 0.5).squeeze(1)

w = torch.zeros(2, requires_grad=True)
b = torch.zeros((), requires_grad=True)
lr = 0.2

for epoch in range(10):
    loss = ((X @ w + b - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
        b -= lr * b.grad
        w.grad.zero_()
        b.grad.zero_()

final_loss = ((X @ w + b - y) ** 2).mean().detach()
