# label: hazard raises
# why: `w -= lr * w.grad` on a requires_grad leaf outside torch.no_grad() raises the leaf in-place error.
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
w -= lr * w.grad  # <-- IPL003: w is a leaf that requires grad
b -= lr * b.grad  # <-- IPL003: b is a leaf that requires grad
