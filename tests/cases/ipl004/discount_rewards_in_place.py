# label: hazard silent
# why: the discounting helper accumulates returns into the caller's reward tensor, so the per-step reward statistics computed afterwards are really returns.
import torch
import torch.nn as nn

torch.manual_seed(0)
policy = nn.Linear(3, 2)
obs = torch.randn(6, 3)
actions = torch.randint(0, 2, (6,))
rewards = torch.rand(6)


def discount(r, gamma=0.9):
    for t in reversed(range(len(r) - 1)):
        r[t] += gamma * r[t + 1]  # <-- IPL004: the caller keeps using rewards afterwards
    return r


returns = discount(rewards)
baseline = rewards.mean()
logp = torch.log_softmax(policy(obs), -1).gather(1, actions[:, None]).squeeze(1)
loss = -(logp * (returns - baseline)).mean()
loss.backward()
mean_reward = rewards.mean()
