# label: safe
# why: the padding mask and position ids are built in place on fresh integer/bool tensors, then used in an out-of-place masked_fill before softmax
import torch
import torch.nn as nn

torch.manual_seed(0)

lengths = [3, 5, 2]
B, L, D = len(lengths), 5, 4
emb = nn.Embedding(10, D)
pos = nn.Embedding(L + 2, D)
attn_proj = nn.Linear(D, D)

ids = torch.randint(1, 10, (B, L))
pad = torch.zeros(B, L, dtype=torch.bool)
for b, n in enumerate(lengths):
    pad[b, n:] = True
position_ids = torch.arange(L).unsqueeze(0).repeat(B, 1)
position_ids.add_(1)
position_ids.masked_fill_(pad, 0)

h = emb(ids) + pos(position_ids)
scores = attn_proj(h) @ h.transpose(1, 2)
scores = scores.masked_fill(pad.unsqueeze(1), -1e9)
attn = scores.softmax(-1)
out = attn @ h
loss = out.sum()
loss.backward()
