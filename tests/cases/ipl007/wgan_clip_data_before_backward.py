# label: hazard silent
# why: WGAN weight clipping through .data is placed between the critic forward and its backward, so the gradients are computed with the clipped weights but the pre-clip activations.
import torch
import torch.nn as nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 4))
D = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
opt_d = torch.optim.RMSprop(D.parameters(), lr=5e-3)
real = torch.randn(16, 4) + 1.0
clip = 0.05

for it in range(2):
    fake = G(torch.randn(16, 3)).detach()
    d_loss = -(D(real).mean() - D(fake).mean())
    for p in D.parameters():
        p.data.clamp_(-clip, clip)  # <-- IPL007: D's graph for d_loss is still to be differentiated
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
