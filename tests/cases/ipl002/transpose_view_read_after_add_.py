# label: hazard silent
# why: xt = x.transpose(0, 1) shares storage with x; the bias is added to x in place before xt is consumed
import torch
import torch.nn as nn

torch.manual_seed(0)

emb = nn.Linear(4, 4)
bias = nn.Parameter(torch.randn(4))
tokens = torch.randn(3, 2, 4)

x = emb(tokens)  # (T, B, D)
xt = x.transpose(0, 1)  # (B, T, D) for the batch-first head
x.add_(bias)  # <-- IPL002
head_out = xt.mean(dim=1)
loss = head_out.sum() + x.pow(2).mean()
loss.backward()
