# label: safe
# why: the helper allocates its own output with torch.zeros and fills it by index assignment; the caller's tensors are only read
import torch
import torch.nn as nn

torch.manual_seed(0)


def scatter_rows(rows, index, num_rows):
    out = torch.zeros(num_rows, rows.shape[1])
    out[index] = rows
    return out


proj = nn.Linear(3, 3)
x = torch.randn(4, 3)
index = torch.tensor([0, 2, 5, 6])
h = proj(x)
table = scatter_rows(h, index, 8)
loss = (table * torch.arange(8.0).unsqueeze(1)).sum() + h.sum()
loss.backward()
