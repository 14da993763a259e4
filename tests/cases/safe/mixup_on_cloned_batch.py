# label: safe
# why: the mixed batch is built in place on a clone, so the clean batch used for the consistency target is untouched.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
x = torch.randn(8, 6)
y = torch.randint(0, 3, (8,))
lam = 0.7
perm = torch.randperm(8)

x_mix = x.clone()
x_mix.mul_(lam)
x_mix.add_(x[perm], alpha=1 - lam)

logits_mix = model(x_mix)
mix_loss = lam * F.cross_entropy(logits_mix, y) + (1 - lam) * F.cross_entropy(logits_mix, y[perm])

with torch.no_grad():
    clean_probs = F.softmax(model(x), dim=-1)
consistency = F.kl_div(F.log_softmax(logits_mix, dim=-1), clean_probs, reduction="batchmean")

loss = mix_loss + 0.1 * consistency
loss.backward()
