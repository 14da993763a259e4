# label: hazard raises
# why: a hand-written SGD step updates leaf weights that require grad without torch.no_grad(), which autograd refuses.
import torch

torch.manual_seed(0)
x = torch.randn(32, 3)
y = x @ torch.tensor([[1.5], [-2.0], [0.5]]) + 0.3
w = torch.zeros(3, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
lr = 0.1

pred = x @ w + b
loss = (pred - y).pow(2).mean()
loss.backward()
w -= lr * w.grad  # <-- IPL003: leaf requiring grad updated outside no_grad
b -= lr * b.grad  # <-- IPL003: leaf requiring grad updated outside no_grad
