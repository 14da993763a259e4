# label: hazard raises
# why: applying the pruning mask with mul_ directly on the nn.Parameter (a leaf requiring grad) outside no_grad raises
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
layer = nn.Linear(10, 4)
x = torch.randn(7, 10)
target = torch.randn(7, 4)

# magnitude pruning: drop the smallest 50% of weights
w = layer.weight
threshold = w.abs().flatten().kthvalue(w.numel() // 2).values
mask = (w.abs() > threshold).float()
w.mul_(mask)  # <-- IPL003

pred = F.linear(x, w, layer.bias)
loss = F.mse_loss(pred, target)
loss.backward()

weight_grad = layer.weight.grad
sparsity = (mask == 0).float().mean()
