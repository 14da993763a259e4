# label: hazard silent
# why: advantages are normalized in place after being stored in the rollout dict, so the value targets built from rollout["adv"] later use the normalized values.
import torch
import torch.nn as nn

torch.manual_seed(0)

T = 6
critic = nn.Linear(3, 1)
obs = torch.randn(T, 3)
rewards = torch.randn(T)
gamma, lam = 0.9, 0.95

with torch.no_grad():
    values = critic(obs).squeeze(-1)

adv = torch.zeros(T)
last = torch.tensor(0.0)
for t in reversed(range(T)):
    next_v = values[t + 1] if t + 1 < T else torch.tensor(0.0)
    delta = rewards[t] + gamma * next_v - values[t]
    last = delta + gamma * lam * last
    adv[t] = last

rollout = {"obs": obs, "adv": adv, "values": values}


def normalized(a, eps=1e-8):
    return a.sub_(a.mean()).div_(a.std() + eps)  # <-- IPL002, IPL004


policy_adv = normalized(adv)

# value targets: returns = advantages + values (should use raw advantages)
returns = rollout["adv"] + rollout["values"]
v_pred = critic(rollout["obs"]).squeeze(-1)
value_loss = (v_pred - returns).pow(2).mean()
policy_term = policy_adv.mean()
value_loss.backward()
loss = value_loss.detach()
