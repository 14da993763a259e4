# label: safe
# why: each augmented view starts from batch.clone(), so the in-place noise and scaling touch only fresh tensors and the two views stay distinct.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 8))
batch = torch.randn(6, 8)
tau = 0.5


def augment(x, scale=0.3):
    x = x.clone()
    x.add_(scale * torch.randn(x.shape))
    x.mul_(1.0 + 0.1 * torch.rand(x.shape[0], 1))
    return x


view1 = augment(batch)
view2 = augment(batch)
z = F.normalize(torch.cat([encoder(view1), encoder(view2)]), dim=1)
sim = z @ z.t() / tau - 1e9 * torch.eye(12)
targets = torch.cat([torch.arange(6, 12), torch.arange(0, 6)])
loss = F.cross_entropy(sim, targets)
loss.backward()
raw_norm = batch.norm()
