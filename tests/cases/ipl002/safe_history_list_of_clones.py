# label: safe
# why: the per-step history stores clones, so the in-place decay of the running state does not rewrite earlier entries
import torch
import torch.nn as nn

torch.manual_seed(0)

inp = nn.Linear(3, 3)
xs = torch.randn(4, 2, 3)

history = []
state = torch.zeros(2, 3)
for t in range(xs.shape[0]):
    state = state + inp(xs[t])
    history.append(state.clone())
    state.mul_(0.9)

traj = torch.stack(history)
loss = traj.sum() + state.sum()
loss.backward()
