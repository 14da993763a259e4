# label: hazard raises
# why: probs.detach() shares storage and version counter with the softmax output, so clamping it in place breaks softmax's backward.
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)

policy = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 4))
states = torch.randn(16, 6)
actions = torch.randint(0, 4, (16,))
returns = torch.randn(16)

probs = F.softmax(policy(states), dim=-1)
p = probs.detach()
p.clamp_(min=1e-6)  # <-- IPL007: in-place on a detached alias of the softmax output
entropy_log = -(p * p.log()).sum(dim=1).mean()

log_probs = torch.log(probs.gather(1, actions[:, None]).squeeze(1))
loss = -(log_probs * returns).mean()
loss.backward()
