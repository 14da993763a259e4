# label: safe
# why: mixup builds the blended batch as a new tensor (x * lam) and accumulates the permuted batch into that fresh tensor, so x is intact for the clean loss.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))
x = torch.randn(16, 6)
y = torch.randint(0, 3, (16,))
lam = 0.7
perm = torch.randperm(16)

mixed = x * lam
mixed.add_(x[perm], alpha=1 - lam)
logits = model(mixed)
mix_loss = lam * F.cross_entropy(logits, y) + (1 - lam) * F.cross_entropy(logits, y[perm])
clean_loss = F.cross_entropy(model(x), y)
(mix_loss + clean_loss).backward()
