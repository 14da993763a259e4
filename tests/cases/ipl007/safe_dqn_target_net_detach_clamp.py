# label: safe
# why: the target network's output is detached and clamped in place, but that graph is never differentiated and the online network's graph does not contain it, so nothing autograd needs is edited.
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

q_net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
target_net = copy.deepcopy(q_net)
gamma = 0.99

s = torch.randn(10, 4)
a = torch.randint(0, 2, (10,))
r = torch.randn(10)
s2 = torch.randn(10, 4)
done = (torch.rand(10) < 0.2).float()

q_next = target_net(s2).detach()
q_next.clamp_(-1.0, 1.0)
target = r + gamma * (1 - done) * q_next.max(dim=1).values
q = q_net(s).gather(1, a[:, None]).squeeze(1)
loss = F.smooth_l1_loss(q, target)
loss.backward()
q_grad = q_net[0].weight.grad.clone()
