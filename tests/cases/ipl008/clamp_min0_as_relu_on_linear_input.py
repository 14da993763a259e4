# label: hazard raises
# why: the hidden state is "ReLU'd" with clamp_(min=0) after the value head already consumed it; the Linear saved it as input
import torch
import torch.nn as nn

torch.manual_seed(0)


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(5, 6)
        self.value = nn.Linear(6, 1)
        self.policy = nn.Linear(6, 3)

    def forward(self, obs):
        h = self.body(obs)
        v = self.value(h)
        h.clamp_(min=0.0)  # <-- IPL001, IPL008
        return self.policy(h), v


model = ActorCritic()
obs = torch.randn(4, 5)
logits, value = model(obs)
loss = logits.logsumexp(-1).mean() + value.pow(2).mean()
loss.backward()
