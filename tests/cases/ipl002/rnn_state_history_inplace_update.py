# label: hazard silent
# why: the leaky hidden state is updated in place, so every entry appended to `history` is the same tensor and the stacked trajectory only holds the final state.
import torch
import torch.nn as nn

torch.manual_seed(0)

T, B, H = 4, 2, 3
inp_proj = nn.Linear(5, H)
readout = nn.Linear(H, 1)
xs = torch.randn(T, B, 5)
decay = 0.7

h = torch.zeros(B, H)
history = []
for t in range(T):
    h.mul_(decay)  # <-- IPL002
    h.add_(inp_proj(xs[t]))  # <-- IPL002
    history.append(h)

traj = torch.stack(history)
out = readout(traj).squeeze(-1)
loss = out.pow(2).mean()
loss.backward()
grad_proj = inp_proj.weight.grad
