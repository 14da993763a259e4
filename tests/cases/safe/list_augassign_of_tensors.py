# label: safe
# why: `feats += [h]` and `losses += [...]` extend Python lists that hold tensors; no tensor is written
import torch
import torch.nn as nn

torch.manual_seed(0)

layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
x = torch.randn(2, 4)

feats = []
losses = []
h = x
for layer in layers:
    h = torch.tanh(layer(h))
    feats += [h]
    losses += [h.pow(2).mean()]
total = torch.stack(losses).sum() + torch.cat(feats, dim=1).mean()
total.backward()
