# label: hazard raises
# why: item assignment on a requires_grad leaf (the learnable positional table) is an in-place copy_ that autograd forbids
import torch
import torch.nn as nn

torch.manual_seed(0)

pos_table = torch.randn(6, 4, requires_grad=True)
tok = nn.Embedding(10, 4)
ids = torch.tensor([[1, 2, 3, 4, 5, 0]])

pos_table[0] = 0.0  # <-- IPL003
h = tok(ids) + pos_table.unsqueeze(0)
loss = h.pow(2).sum()
loss.backward()
