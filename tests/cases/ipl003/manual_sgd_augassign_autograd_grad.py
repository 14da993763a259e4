# label: hazard raises
# why: w and b are leaves created with requires_grad=True, so the hand-written SGD step `w -= lr * gw` outside torch.no_grad() raises the leaf in-place error on the first iteration.
import torch

torch.manual_seed(0)

X = torch.randn(32, 3)
true_w = torch.tensor([[1.5], [-2.0], [0.5]])
y = X @ true_w + 0.3 + 0.01 * torch.randn(32, 1)

w = torch.zeros(3, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
lr = 0.1
losses = []

for step in range(5):
    pred = X @ w + b
    loss = ((pred - y) ** 2).mean()
    gw, gb = torch.autograd.grad(loss, [w, b])
    w -= lr * gw  # <-- IPL003: leaf w requires grad, no torch.no_grad()
    b = b - lr * gb
    losses.append(loss.detach())

final_loss = torch.stack(losses)
