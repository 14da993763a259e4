# label: hazard raises
# why: the decoupled weight-decay step writes its result into the weight with torch.mul(..., out=w) outside no_grad, and torch refuses an out= write into a leaf that requires grad (RuntimeError "functions with out=... arguments don't support automatic differentiation").
import torch

torch.manual_seed(0)

X = torch.randn(16, 4)
y = torch.randn(16, 2)
w = torch.randn(4, 2, requires_grad=True)
lr, wd = 0.05, 0.01

pred = X @ w
loss = (pred - y).pow(2).mean()
loss.backward()
grad_w = w.grad.clone()

torch.mul(w.detach(), 1.0 - lr * wd, out=w)  # <-- IPL003: out= targets a grad-requiring leaf
final_w = w.detach() - lr * grad_w
