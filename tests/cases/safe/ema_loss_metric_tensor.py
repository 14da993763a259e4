# label: safe
# why: the smoothed-loss tracker is a plain tensor updated in place from loss.detach(); it never enters the graph
import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(6, 4)
y = torch.randn(6, 1)

ema_loss = torch.zeros(())
for step in range(3):
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    ema_loss.mul_(0.9)
    ema_loss.add_(0.1 * loss.detach())
