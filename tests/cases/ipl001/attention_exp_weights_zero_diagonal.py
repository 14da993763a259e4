# label: hazard raises
# why: exp() saves its output for backward, and zeroing the diagonal through a view of that output bumps its version, so backward raises.
import torch
import torch.nn as nn

torch.manual_seed(0)

q_proj = nn.Linear(4, 4, bias=False)
k_proj = nn.Linear(4, 4, bias=False)
x = torch.randn(5, 4)

q = q_proj(x)
k = k_proj(x)
scores = q @ k.t() / 2.0
weights = torch.exp(scores - scores.max(dim=-1, keepdim=True).values.detach())
weights.diagonal().zero_()  # <-- IPL001
attn = weights / weights.sum(dim=-1, keepdim=True)
out = attn @ x
loss = out.pow(2).sum()
loss.backward()
