# label: hazard raises
# why: the shared tanh features are clamped in place after tanh saved its output for backward.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ActorCritic(nn.Module):
    def __init__(self, obs_dim=4, hidden=8, n_actions=3):
        super().__init__()
        self.body = nn.Linear(obs_dim, hidden)
        self.pi = nn.Linear(hidden, n_actions)
        self.v = nn.Linear(hidden, 1)

    def forward(self, obs):
        h = torch.tanh(self.body(obs))
        logits = self.pi(h)
        h.clamp_(-0.5, 0.5)  # <-- IPL001
        value = self.v(h).squeeze(-1)
        return logits, value


model = ActorCritic()
obs = torch.randn(5, 4)
actions = torch.randint(0, 3, (5,))
returns = torch.randn(5)

logits, value = model(obs)
logp = F.log_softmax(logits, dim=-1).gather(1, actions[:, None]).squeeze(1)
adv = (returns - value).detach()
loss = -(logp * adv).mean() + 0.5 * (returns - value).pow(2).mean()
loss.backward()
