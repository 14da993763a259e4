# label: hazard raises
# why: w is a leaf created with requires_grad=True; adding noise in place outside no_grad is rejected by autograd
import torch

torch.manual_seed(0)

w = torch.randn(4, 3, requires_grad=True)
x = torch.randn(5, 4)

noise = 0.01 * torch.randn(4, 3)
w.add_(noise)  # <-- IPL003
y = x @ w
loss = y.pow(2).mean()
loss.backward()
