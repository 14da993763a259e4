# label: hazard raises
# why: torch.log saved p (its input); the later `p.add_(eps)` stabiliser modifies it after the log already consumed it
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

rate_head = nn.Linear(5, 3)
x = torch.randn(4, 5)
counts = torch.poisson(torch.full((4, 3), 2.0))

p = F.softplus(rate_head(x))
log_p = torch.log(p)
p.add_(1e-6)  # <-- IPL001
nll = (p - counts * log_p).mean()
nll.backward()
