# label: safe
# why: `y = h.relu_()` binds a new name, but the old name h is never read again afterwards
import torch
import torch.nn as nn

torch.manual_seed(0)


def encode(layer, x):
    h = layer(x)
    y = h.relu_()
    return y * 2.0


layer = nn.Linear(4, 5)
x = torch.randn(3, 4)
out = encode(layer, x)
loss = out.sum()
loss.backward()
