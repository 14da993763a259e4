# label: hazard silent
# why: cutmix pastes the patch into its images argument in place, and the caller later uses the same batch as the clean view for the supervised loss.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def cutmix(images, labels, box=(1, 3, 1, 3)):
    n = images.size(0)
    perm = torch.arange(n - 1, -1, -1)
    y0, y1, x0, x1 = box
    images[:, :, y0:y1, x0:x1] = images[perm, :, y0:y1, x0:x1]  # <-- IPL004
    area = (y1 - y0) * (x1 - x0) / (images.size(2) * images.size(3))
    return images, labels, labels[perm], 1.0 - area


model = nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(2 * 4 * 4, 3))
batch = torch.randn(4, 1, 4, 4)
targets = torch.tensor([0, 1, 2, 1])

mixed, y_a, y_b, lam = cutmix(batch, targets)
out_mix = model(mixed)
cut_loss = lam * F.cross_entropy(out_mix, y_a) + (1 - lam) * F.cross_entropy(out_mix, y_b)

clean_loss = F.cross_entropy(model(batch), targets)
loss = cut_loss + clean_loss
loss.backward()
