# label: hazard silent
# why: state["h"] refers to the same tensor as h; the in-place update makes the "previous state" entry equal to the new state
import torch
import torch.nn as nn

torch.manual_seed(0)

encoder = nn.Linear(5, 5)
delta_net = nn.Linear(5, 5)
x = torch.randn(3, 5)

h = encoder(x)
state = {"h": h}
h.add_(delta_net(x))  # <-- IPL002
change = h - state["h"]
loss = h.sum() + 10.0 * change.pow(2).sum()
loss.backward()
