# label: hazard silent
# why: masked_fill_ is used inline before softmax, so the later z-loss regulariser reads the masked (-1e4) scores instead of the raw ones
import torch
import torch.nn as nn

torch.manual_seed(0)

q_proj = nn.Linear(4, 4)
k_proj = nn.Linear(4, 4)
x = torch.randn(2, 3, 4)
pad = torch.tensor([[False, False, True], [False, True, True]]).unsqueeze(1)

scores = q_proj(x) @ k_proj(x).transpose(-2, -1)
attn = scores.masked_fill_(pad, -1e4).softmax(dim=-1)  # <-- IPL002
z_loss = scores.logsumexp(dim=-1).pow(2).mean()
loss = (attn @ x).sum() + 1e-3 * z_loss
loss.backward()
