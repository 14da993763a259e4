# label: hazard raises
# why: a small epsilon is added in place to the softmax probabilities, which softmax saved for backward.
import torch
import torch.nn as nn

torch.manual_seed(0)


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 3))

    def forward(self, obs):
        return self.net(obs)


policy = Policy()
obs = torch.randn(8, 4)
actions = torch.randint(0, 3, (8,))
advantages = torch.randn(8)
ent_coef = 0.01

logits = policy(obs)
probs = torch.softmax(logits, dim=-1)
probs += 1e-6  # <-- IPL001
logp = probs.log()
entropy = -(probs * logp).sum(-1).mean()
chosen = logp.gather(1, actions[:, None]).squeeze(1)
loss = -(chosen * advantages).mean() - ent_coef * entropy
loss.backward()
