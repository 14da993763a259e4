# label: hazard silent
# why: cutmix() pastes the patch into the caller's image tensor in place; the caller's clean forward pass then sees the pasted images
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(
    nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
    nn.Flatten(), nn.Linear(4, 5),
)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)


def cutmix(images, labels, perm, box):
    y0, y1, x0, x1 = box
    images[:, :, y0:y1, x0:x1] = images[perm, :, y0:y1, x0:x1]  # <-- IPL004
    h, w = images.shape[-2:]
    lam = 1.0 - (y1 - y0) * (x1 - x0) / (h * w)
    return images, labels, labels[perm], lam


images = torch.randn(4, 3, 8, 8)
labels = torch.randint(0, 5, (4,))
perm = torch.randperm(4)

mixed, y_a, y_b, lam = cutmix(images, labels, perm, (2, 6, 1, 5))
logits = model(mixed)
cm_loss = lam * F.cross_entropy(logits, y_a) + (1 - lam) * F.cross_entropy(logits, y_b)
clean_loss = F.cross_entropy(model(images), labels)
loss = cm_loss + clean_loss

opt.zero_grad()
loss.backward()
opt.step()

conv_w = model[0].weight.detach().clone()
