# label: hazard silent
# why: mixup writes the blended images into the caller's batch through out=, so the "clean" training accuracy computed afterwards is measured on mixed images.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 4))


def mixup(x, y_onehot, lam, perm):
    x_perm = x[perm]
    torch.lerp(x_perm, x, lam, out=x)  # <-- IPL004: out= overwrites the caller's batch
    y_mix = lam * y_onehot + (1 - lam) * y_onehot[perm]
    return x, y_mix


x = torch.randn(16, 20)
y = torch.randint(0, 4, (16,))
perm = torch.randperm(16)
x_mix, y_mix = mixup(x, F.one_hot(y, 4).float(), 0.6, perm)
loss = -(y_mix * model(x_mix).log_softmax(-1)).sum(-1).mean()
loss.backward()

with torch.no_grad():
    clean_logits = model(x)
    clean_nll = F.cross_entropy(clean_logits, y)
