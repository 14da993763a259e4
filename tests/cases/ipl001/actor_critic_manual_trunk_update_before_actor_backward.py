# label: hazard raises no-twin
# why: the shared trunk is updated in place (under no_grad) right after the critic backward, but the actor loss graph built in the same forward still holds the trunk weights it saved.
import torch
import torch.nn as nn

torch.manual_seed(0)
trunk = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh())
actor = nn.Linear(16, 2)
critic = nn.Linear(16, 1)
params = list(trunk.parameters()) + list(actor.parameters()) + list(critic.parameters())
lr = 0.05

obs = torch.randn(24, 4)
actions = torch.randint(0, 2, (24,))
returns = torch.randn(24)

h = trunk(obs)
values = critic(h).squeeze(-1)
logp = torch.log_softmax(actor(h), -1).gather(1, actions[:, None]).squeeze(1)
adv = (returns - values).detach()
value_loss = (returns - values).pow(2).mean()
actor_loss = -(logp * adv).mean()

value_loss.backward(retain_graph=True)
with torch.no_grad():
    for p in params:
        if p.grad is not None:
            p -= lr * p.grad  # <-- IPL001: trunk weights were saved by the actor graph, whose backward is still pending
            p.grad = None
actor_loss.backward()
