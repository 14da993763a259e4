# label: hazard silent
# why: the batch is mixed in place with mul_/add_, so the consistency loss that should see the clean images reads the mixed ones.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
x = torch.randn(8, 6)
y = torch.randint(0, 3, (8,))
lam = 0.7
perm = torch.randperm(8)

x_perm = x[perm]
y_a, y_b = y, y[perm]
x_mix = x.mul_(lam).add_(x_perm, alpha=1 - lam)  # <-- IPL002

logits_mix = model(x_mix)
mix_loss = lam * F.cross_entropy(logits_mix, y_a) + (1 - lam) * F.cross_entropy(logits_mix, y_b)

# consistency regularizer on the clean view
with torch.no_grad():
    clean_probs = F.softmax(model(x), dim=-1)
consistency = F.kl_div(F.log_softmax(logits_mix, dim=-1), clean_probs, reduction="batchmean")

loss = mix_loss + 0.1 * consistency
loss.backward()
