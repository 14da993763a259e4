# label: hazard raises
# why: wrapping the clamp_ in torch.no_grad() does not help: it still bumps the version of the sigmoid output saved by SigmoidBackward and the BCE loss
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

head = nn.Linear(4, 3)
x = torch.randn(5, 4)
y = (torch.rand(5, 3) > 0.5).float()

p = torch.sigmoid(head(x))
loss = F.binary_cross_entropy(p, y)
with torch.no_grad():
    p.clamp_(1e-4, 1 - 1e-4)  # <-- IPL001
    log_loss_metric = -(y * p.log() + (1 - y) * (1 - p).log()).mean()
loss.backward()
