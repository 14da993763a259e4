# label: hazard silent
# why: `target = q_values.data` shares storage with q_values, so writing the TD values into it also overwrites the prediction the loss differentiates
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

q_net = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 3))
target_net = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 3))
target_net.load_state_dict(q_net.state_dict())
gamma = 0.99

B = 8
obs = torch.randn(B, 4)
next_obs = torch.randn(B, 4)
actions = torch.randint(0, 3, (B,))
rewards = torch.randn(B)
dones = (torch.rand(B) < 0.2).float()

q_values = q_net(obs)
with torch.no_grad():
    next_max = target_net(next_obs).max(dim=1).values
td = rewards + gamma * next_max * (1.0 - dones)
target = q_values.data
target[torch.arange(B), actions] = td  # <-- IPL007
loss = F.smooth_l1_loss(q_values, target)
loss.backward()
q_grad = q_net[0].weight.grad
head_grad = q_net[2].weight.grad
