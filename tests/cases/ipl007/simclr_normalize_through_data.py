# label: hazard silent
# why: the projections are L2-normalised through .data to save memory, so the contrastive loss gradient skips the normalisation's Jacobian.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
proj = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 4))
x = torch.randn(5, 6)
v1 = x + 0.1 * torch.randn(5, 6)
v2 = x + 0.1 * torch.randn(5, 6)

z = proj(torch.cat([v1, v2]))
z.data.div_(z.norm(dim=1, keepdim=True))  # <-- IPL007: z is still to be differentiated
sim = z @ z.t() / 0.5 - 1e9 * torch.eye(10)
targets = torch.cat([torch.arange(5, 10), torch.arange(0, 5)])
loss = F.cross_entropy(sim, targets)
loss.backward()
