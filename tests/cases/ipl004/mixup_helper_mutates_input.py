# label: hazard silent
# why: mixup() blends the caller's batch in place, so the "clean" loss afterwards is computed on the mixed images
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1)


def mixup(x, y_onehot, lam, perm):
    partner = x[perm] * (1 - lam)
    x.mul_(lam).add_(partner)  # <-- IPL004
    y_mix = lam * y_onehot + (1 - lam) * y_onehot[perm]
    return x, y_mix


x = torch.randn(8, 6)
y = torch.randint(0, 3, (8,))
y1 = F.one_hot(y, 3).float()
lam = 0.7
perm = torch.randperm(8)

x_mix, y_mix = mixup(x, y1, lam, perm)
logits_mix = model(x_mix)
mix_loss = -(y_mix * F.log_softmax(logits_mix, dim=1)).sum(dim=1).mean()
clean_loss = F.cross_entropy(model(x), y)
loss = mix_loss + 0.5 * clean_loss

opt.zero_grad()
loss.backward()
opt.step()

w_after = model[0].weight.detach().clone()
