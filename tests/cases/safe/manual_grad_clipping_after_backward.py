# label: safe
# why: gradients are rescaled with p.grad.mul_ only after backward() has finished and before opt.step(), with zero_grad each iteration
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
max_norm = 0.25
norms = []

for step in range(3):
    x = torch.randn(8, 5)
    y = torch.randint(0, 3, (8,))
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    total_norm = torch.sqrt(sum((p.grad ** 2).sum() for p in model.parameters()))
    clip_coef = max_norm / (total_norm + 1e-6)
    if clip_coef < 1:
        for p in model.parameters():
            p.grad.mul_(clip_coef)
    norms.append(total_norm.item())
    opt.step()

w_after = model[0].weight.detach().clone()
last_grad = model[2].weight.grad.clone()
