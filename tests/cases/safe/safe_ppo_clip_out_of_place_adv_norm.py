# label: safe
# why: PPO clips the ratio out of place and normalises the advantages in place, but the advantages are a fresh tensor outside the graph whose old value is never read.
import torch
import torch.nn as nn

torch.manual_seed(0)
policy = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 3))
value = nn.Linear(4, 1)
obs = torch.randn(32, 4)
actions = torch.randint(0, 3, (32,))
returns = torch.randn(32)
with torch.no_grad():
    old_logp = torch.log_softmax(policy(obs), -1).gather(1, actions[:, None]).squeeze(1) + 0.05 * torch.randn(32)

clip_eps = 0.2
values = value(obs).squeeze(-1)
advantages = returns - values.detach()
advantages -= advantages.mean()
advantages /= advantages.std() + 1e-8
logits = policy(obs)
logp = torch.log_softmax(logits, -1).gather(1, actions[:, None]).squeeze(1)
ratio = torch.exp(logp - old_logp)
surr1 = ratio * advantages
surr2 = ratio.clamp(1 - clip_eps, 1 + clip_eps) * advantages
probs = torch.softmax(logits, -1)
entropy = -(probs * torch.log_softmax(logits, -1)).sum(-1).mean()
loss = -torch.min(surr1, surr2).mean() + 0.5 * (returns - values).pow(2).mean() - 0.01 * entropy
loss.backward()
