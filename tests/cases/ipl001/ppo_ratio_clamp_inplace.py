# label: hazard raises
# why: PPO clips the probability ratio in place, but the ratio is the output of exp, which autograd saved for backward.
import torch
import torch.nn as nn

torch.manual_seed(0)
policy = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 3))
obs = torch.randn(32, 4)
actions = torch.randint(0, 3, (32,))
advantages = torch.randn(32)
with torch.no_grad():
    old_logp = torch.log_softmax(policy(obs), -1).gather(1, actions[:, None]).squeeze(1) + 0.05 * torch.randn(32)

clip_eps = 0.2
logp = torch.log_softmax(policy(obs), -1).gather(1, actions[:, None]).squeeze(1)
ratio = torch.exp(logp - old_logp)
surr1 = ratio * advantages
ratio.clamp_(1 - clip_eps, 1 + clip_eps)  # <-- IPL001: exp saved its output for backward
surr2 = ratio * advantages
policy_loss = -torch.min(surr1, surr2).mean()
policy_loss.backward()
