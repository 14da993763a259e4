# label: safe
# why: .data copies fill the target-net buffers once before any forward; the TD target is built under no_grad so clamping it in place is harmless
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call

torch.manual_seed(0)
online = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
target_params = {n: torch.empty_like(p) for n, p in online.named_parameters()}
for n, p in online.named_parameters():
    target_params[n].data.copy_(p.data)
opt = torch.optim.Adam(online.parameters(), lr=1e-3)
gamma = 0.99

obs = torch.randn(8, 4)
next_obs = torch.randn(8, 4)
actions = torch.randint(0, 2, (8,))
rewards = torch.randn(8)
dones = (torch.rand(8) < 0.2).float()

q = online(obs).gather(1, actions[:, None]).squeeze(1)
with torch.no_grad():
    next_q = functional_call(online, target_params, (next_obs,)).max(dim=1).values
    td_target = rewards + gamma * next_q * (1 - dones)
    td_target.clamp_(-5.0, 5.0)
loss = F.smooth_l1_loss(q, td_target)

opt.zero_grad()
loss.backward()
opt.step()

online_w = online[0].weight.detach().clone()
target_w = target_params["0.weight"].clone()
