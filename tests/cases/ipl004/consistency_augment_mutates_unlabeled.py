# label: hazard silent
# why: weak_augment() adds noise to the caller's unlabeled batch in place, so the strong view is built from the already-noised batch
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
threshold = 0.3


def weak_augment(batch, noise_std):
    batch.add_(torch.randn_like(batch) * noise_std)  # <-- IPL004
    return batch


def strong_augment(batch):
    mask = (torch.rand_like(batch) > 0.3).float()
    return batch * mask + 0.5 * torch.randn_like(batch)


x_lab = torch.randn(4, 10)
y_lab = torch.randint(0, 4, (4,))
unlabeled = torch.randn(8, 10)

with torch.no_grad():
    probs = F.softmax(model(weak_augment(unlabeled, 0.5)), dim=1)
    conf, pseudo = probs.max(dim=1)
    mask = (conf > threshold).float()

strong = strong_augment(unlabeled)
u_loss = (F.cross_entropy(model(strong), pseudo, reduction="none") * mask).mean()
s_loss = F.cross_entropy(model(x_lab), y_lab)
loss = s_loss + u_loss

opt.zero_grad()
loss.backward()
opt.step()

w_after = model[0].weight.detach().clone()
