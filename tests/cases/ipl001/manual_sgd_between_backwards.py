# label: hazard raises
# why: the actor's parameters are updated in place (hand-written SGD under no_grad) after the policy-loss backward but before the entropy-bonus backward of the same forward graph, which saved those weights.
import torch
import torch.nn as nn
from torch.distributions import Categorical


class ActorCritic(nn.Module):
    def __init__(self, obs_dim=4, n_actions=3, hidden=8):
        super().__init__()
        self.actor = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, n_actions))
        self.critic = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, 1))

    def forward(self, obs):
        return Categorical(logits=self.actor(obs)), self.critic(obs).squeeze(-1)


def sgd_(params, lr):
    with torch.no_grad():
        for p in params:
            if p.grad is not None:
                p.sub_(p.grad * lr)  # <-- IPL001: actor weights are still saved by the entropy graph


torch.manual_seed(0)
ac = ActorCritic()
obs = torch.randn(6, 4)
returns = torch.randn(6)
dist, values = ac(obs)
actions = dist.sample()
advantages = (returns - values).detach()
policy_loss = -(dist.log_prob(actions) * advantages).mean()
value_loss = (returns - values).pow(2).mean()
entropy_bonus = -0.01 * dist.entropy().mean()

(policy_loss + value_loss).backward(retain_graph=True)
sgd_(ac.actor.parameters(), lr=0.1)
entropy_bonus.backward()
