# label: hazard raises
# why: the decoupled weight decay modifies parameters in place after the forward saved them (second Linear saves its weight) but before backward.
import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, 1))
x = torch.randn(10, 6)
y = torch.randn(10, 1)
lr, wd = 0.1, 0.01

pred = model(x)
loss = nn.functional.mse_loss(pred, y)
with torch.no_grad():
    for p in model.parameters():
        p.mul_(1 - lr * wd)  # <-- IPL001: parameters are needed by the pending backward
loss.backward()
