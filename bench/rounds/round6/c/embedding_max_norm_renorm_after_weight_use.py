# label: hazard raises no-twin
# why: embedding(idx) with max_norm renormalizes the looked-up rows of embedding.weight in place, but embedding.weight was already used (and saved) by the matmul on the previous line.
# source: https://github.com/pytorch/pytorch/issues/26596 (documented in https://github.com/pytorch/pytorch/pull/45595)
import torch
import torch.nn as nn

torch.manual_seed(0)

n, d, m = 3, 5, 7
batch_size = 11

embedding = nn.Embedding(n, d, max_norm=True)
W = torch.randn((m, d), requires_grad=True)
optimizer = torch.optim.Adam(list(embedding.parameters()) + [W], lr=1e-3)

optimizer.zero_grad()
idx = torch.tensor([1, 2])

a = embedding.weight @ W.t()  # Line a
b = embedding(idx) @ W.t()  # <-- IPL001: Line b; max_norm renorms embedding.weight in place after Line a saved it

out = (a.unsqueeze(0) + b.unsqueeze(1))
loss = out.sigmoid().prod()
loss.backward()
optimizer.step()
