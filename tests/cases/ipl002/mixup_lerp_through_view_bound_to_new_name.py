# label: hazard silent
# why: mixup blends the first half of the batch into the second in place through a view, so the clean-loss forward on the full batch afterwards sees the mixed images.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))
x = torch.randn(16, 6)
y = torch.randint(0, 3, (16,))
lam = 0.7

first = x[:8]
second = x[8:]
mixed = first.lerp_(second, 1 - lam)  # <-- IPL002: x (the base of this view) is read again for the clean loss
mix_loss = lam * F.cross_entropy(model(mixed), y[:8]) + (1 - lam) * F.cross_entropy(model(mixed), y[8:])
clean_loss = F.cross_entropy(model(x), y)
(mix_loss + clean_loss).backward()
