# label: hazard raises
# why: resetting finished episodes with h.detach().masked_fill_() writes into tanh's saved output through a detach alias that shares the version counter, so the rollout's backward raises.
import torch
import torch.nn as nn

torch.manual_seed(0)

cell_in = nn.Linear(3, 5)
cell_h = nn.Linear(5, 5, bias=False)
policy = nn.Linear(5, 2)

obs = torch.randn(4, 2, 3)
dones = torch.tensor([[False, False], [True, False], [False, True], [False, False]])
h = torch.zeros(2, 5)
logits = []
for t in range(4):
    h = torch.tanh(cell_in(obs[t]) + cell_h(h))
    logits.append(policy(h))
    h.detach().masked_fill_(dones[t][:, None], 0.0)  # <-- IPL007: reset goes into tanh's saved result

loss = torch.stack(logits).logsumexp(-1).mean()
loss.backward()
rec_grad = cell_h.weight.grad.clone()
