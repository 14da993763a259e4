# label: safe
# why: gradients are rescaled in place via p.grad.mul_ after backward; .grad tensors are not part of any graph, and `total_sq += ...` sums Python floats
import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x = torch.randn(6, 4) * 10
y = torch.randn(6, 2)
max_norm = 0.5

loss = nn.functional.mse_loss(model(x), y)
opt.zero_grad()
loss.backward()
total_sq = 0.0
for p in model.parameters():
    total_sq += p.grad.pow(2).sum().item()
total_norm = total_sq ** 0.5
clip_coef = max_norm / (total_norm + 1e-6)
if clip_coef < 1.0:
    for p in model.parameters():
        p.grad.mul_(clip_coef)
opt.step()
