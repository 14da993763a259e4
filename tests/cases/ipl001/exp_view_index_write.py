# label: hazard raises
# why: v is a flat view of the exp output (saved by exp), so writing v[idx] modifies the saved tensor.
import torch

torch.manual_seed(0)

log_rates = torch.randn(4, 6, requires_grad=True)
counts = torch.randint(0, 5, (4, 6)).float()

rates = torch.exp(log_rates)
v = rates.view(-1)
# guard against blow-ups on the few largest entries
idx = v.topk(3).indices
v[idx] = 1.0  # <-- IPL001: writes into exp's saved output through a view
nll = (rates - counts * torch.log(rates + 1e-6)).sum()
nll.backward()
