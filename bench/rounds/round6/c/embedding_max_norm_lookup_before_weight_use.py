# label: safe
# why: with Line a and Line b swapped (the workaround from the report), embedding(idx) renormalizes the weight in place before any op has saved it, so the later matmul saves the already-renormed weight.
# source: https://github.com/pytorch/pytorch/issues/26596 (workaround: swap Line a and Line b; see the note added in https://github.com/pytorch/pytorch/pull/45595)
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

b = embedding(idx) @ W.t()    # Line b
a = embedding.weight @ W.t()  # Line a

out = (a.unsqueeze(0) + b.unsqueeze(1))
loss = out.sigmoid().prod()
loss.backward()
W_grad = W.grad.clone()
optimizer.step()
