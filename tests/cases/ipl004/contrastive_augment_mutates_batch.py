# label: hazard silent
# why: the augmentation helper adds noise to its argument in place, so the two "views" of the batch are the same tensor and the contrastive loss compares it with itself.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 8))
batch = torch.randn(6, 8)
tau = 0.5


def augment(x, scale=0.3):
    x.add_(scale * torch.randn(x.shape))  # <-- IPL004: caller reuses batch for the second view
    return x


def nt_xent(z1, z2):
    z = F.normalize(torch.cat([z1, z2]), dim=1)
    sim = z @ z.t() / tau
    n = z1.shape[0]
    sim = sim - 1e9 * torch.eye(2 * n)
    targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])
    return F.cross_entropy(sim, targets)


view1 = augment(batch)
view2 = augment(batch)
loss = nt_xent(encoder(view1), encoder(view2))
loss.backward()
