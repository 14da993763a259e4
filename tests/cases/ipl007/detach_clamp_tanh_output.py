# label: hazard raises
# why: unlike .data, .detach() shares the version counter, so clamping the detached view of the saved tanh output is caught at backward
import torch
import torch.nn as nn

torch.manual_seed(0)

actor = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 2))
obs = torch.randn(3, 4)

action = torch.tanh(actor(obs))
action.detach().clamp_(-0.9, 0.9)  # <-- IPL007
q = (action * torch.tensor([1.0, -0.5])).sum()
q.backward()
