# label: safe no-twin
# why: the TD target comes from a target network under no_grad, and the Polyak soft update of the target weights runs under no_grad after the online network's step.
import copy
import torch
import torch.nn as nn

torch.manual_seed(0)
q_net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
target_net = copy.deepcopy(q_net)
opt = torch.optim.Adam(q_net.parameters(), lr=1e-3)
gamma, tau = 0.99, 0.1
obs = torch.randn(3, 8, 4)
next_obs = torch.randn(3, 8, 4)
actions = torch.randint(0, 2, (3, 8))
rewards = torch.randn(3, 8)
dones = (torch.rand(3, 8) < 0.2).float()

for i in range(3):
    q = q_net(obs[i]).gather(1, actions[i][:, None]).squeeze(1)
    with torch.no_grad():
        q_next = target_net(next_obs[i]).max(1).values
        q_next.mul_(gamma * (1 - dones[i]))
        target = rewards[i] + q_next
    loss = nn.functional.smooth_l1_loss(q, target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        for tp, p in zip(target_net.parameters(), q_net.parameters()):
            tp.mul_(1 - tau).add_(p, alpha=tau)
