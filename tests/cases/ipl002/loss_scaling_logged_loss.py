# label: hazard silent
# why: loss.mul_(scale) scales the loss tensor itself, so the loss logged afterwards through the original name is the scaled value
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
scale = 1024.0

x = torch.randn(8, 6)
y = torch.randn(8, 1)

pred = model(x)
loss = F.mse_loss(pred, y)
scaled = loss.mul_(scale)  # <-- IPL002

opt.zero_grad()
scaled.backward()
for p in model.parameters():
    p.grad.div_(scale)
torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
opt.step()

logged_loss = loss.detach().clone()
w_after = model[0].weight.detach().clone()
