# label: hazard raises
# why: feat.pow(2) saved feat; dividing feat by its norm in place overwrites the tensor PowBackward needs
import torch
import torch.nn as nn

torch.manual_seed(0)

encoder = nn.Linear(6, 4)
x = torch.randn(3, 6)

feat = encoder(x)
norm = feat.pow(2).sum(dim=1, keepdim=True).sqrt()
feat.div_(norm)  # <-- IPL001
sim = feat @ feat.t()
loss = sim.sum()
loss.backward()
