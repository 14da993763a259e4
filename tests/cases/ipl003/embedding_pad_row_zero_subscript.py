# label: hazard raises
# why: zeroing the padding row through subscript assignment on the embedding's weight Parameter (via a local alias) outside torch.no_grad() is an in-place write to a leaf that requires grad.
import torch
import torch.nn as nn

torch.manual_seed(0)

vocab, dim, pad_idx = 20, 6, 0
emb = nn.Embedding(vocab, dim)
encoder = nn.GRU(dim, 8, batch_first=True)

# model surgery after loading: make sure the pad token embeds to zeros
weight = emb.weight
weight[pad_idx] = 0.0  # <-- IPL003: subscript assignment on a Parameter outside no_grad

tokens = torch.tensor([[3, 5, 7, 0, 0], [2, 9, 4, 11, 0]])
out, h = encoder(emb(tokens))
loss = h.pow(2).sum()
loss.backward()
