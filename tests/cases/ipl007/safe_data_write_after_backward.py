# label: safe no-twin
# why: the .data write happens after backward() consumed the graph (post-step clipping of a running scale), so no saved value is read afterwards
import torch
import torch.nn as nn

torch.manual_seed(0)

layer = nn.Linear(3, 3)
log_scale = nn.Parameter(torch.zeros(3))
opt = torch.optim.Adam(list(layer.parameters()) + [log_scale], lr=0.5)
x = torch.randn(4, 3)

out = layer(x) * log_scale.exp()
loss = out.pow(2).mean()
opt.zero_grad()
loss.backward()
opt.step()
log_scale.data.clamp_(-1.0, 1.0)
