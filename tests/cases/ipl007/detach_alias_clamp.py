# label: hazard raises
# why: p.detach() shares storage and version counter with the sigmoid output, so clamping the "target" in place modifies what sigmoid saved.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

net = nn.Linear(4, 3)
x = torch.randn(6, 4)

p = torch.sigmoid(net(x))
target = p.detach()
target.clamp_(0.1, 0.9)  # <-- IPL007: detach() is an alias of the saved sigmoid output
loss = F.mse_loss(p, target) + p.mean()
loss.backward()
