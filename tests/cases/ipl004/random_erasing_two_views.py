# label: hazard silent
# why: random_erase zeroes a patch of the caller's batch through subscript assignment, so the second contrastive view built from the same batch is erased too.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

encoder = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
projector = nn.Linear(8, 4)


def random_erase(img, size):
    h, w = img.shape[-2:]
    y0 = int(torch.randint(0, h - size + 1, ()))
    x0 = int(torch.randint(0, w - size + 1, ()))
    img[:, :, y0:y0 + size, x0:x0 + size] = 0.0  # <-- IPL004: img is the caller's batch
    return img


batch = torch.rand(4, 3, 12, 12)
view1 = random_erase(batch, 6)
view2 = torch.flip(batch, dims=[-1])
z1 = F.normalize(projector(encoder(view1)), dim=-1)
z2 = F.normalize(projector(encoder(view2)), dim=-1)
loss = -(z1 * z2).sum(-1).mean()
loss.backward()
