# label: safe
# why: curriculum weights come from detached losses, the running mean is updated under no_grad, inputs are scaled out of place, and loss_total accumulates floats
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
input_scale = 0.5
tau = 2.0
running_mean = torch.zeros(8)
loss_total = 0.0

for step in range(4):
    x = torch.randn(6, 5)
    y = torch.randint(0, 3, (6,))
    x = x * input_scale
    opt.zero_grad()
    h = F.relu(model[0](x))
    per_sample = F.cross_entropy(model[2](h), y, reduction="none")
    weights = torch.sigmoid(-tau * per_sample.detach())
    weights /= weights.sum()
    loss = (weights * per_sample).sum()
    loss.backward()
    opt.step()
    loss_total += loss.item()
    with torch.no_grad():
        running_mean.mul_(0.9).add_(h.mean(dim=0), alpha=0.1)

avg_loss = torch.tensor(loss_total / 4)
w_after = model[0].weight.detach().clone()
