# label: safe
# why: the replay buffer stores clones of the observation, so the in-place environment update of obs does not change the stored transitions.
import random
import torch
import torch.nn as nn

torch.manual_seed(0)
random.seed(0)


class ReplayBuffer:
    def __init__(self):
        self.storage = []

    def push(self, obs, action, reward, next_obs):
        self.storage.append((obs.clone(), action, reward, next_obs.clone()))

    def sample(self, n):
        batch = self.storage[:n]
        obs, act, rew, nxt = zip(*batch)
        return torch.stack(obs), torch.tensor(act), torch.tensor(rew), torch.stack(nxt)


q_net = nn.Linear(3, 2)
buf = ReplayBuffer()
obs = torch.zeros(3)
for t in range(5):
    action = t % 2
    next_obs = obs + 0.1 * (action + 1)
    buf.push(obs, action, float(t), next_obs)
    obs.copy_(next_obs)
    obs.mul_(0.9)

o, a, r, n = buf.sample(4)
with torch.no_grad():
    target = r + 0.9 * q_net(n).max(dim=1).values
q = q_net(o).gather(1, a[:, None]).squeeze(1)
loss = (q - target).pow(2).mean()
loss.backward()
