# label: hazard silent
# why: fake.data.clamp_ (for "valid" images) edits the generator output that TanhBackward and D's first Linear saved, without any error
import torch
import torch.nn as nn

torch.manual_seed(0)

G = nn.Sequential(nn.Linear(3, 6), nn.ReLU(), nn.Linear(6, 4), nn.Tanh())
D = nn.Sequential(nn.Linear(4, 6), nn.LeakyReLU(0.2), nn.Linear(6, 1))
z = torch.randn(5, 3, requires_grad=True)

fake = G(z)
d_out = D(fake)
fake.data.clamp_(-0.1, 0.1)  # <-- IPL007
g_loss = nn.functional.softplus(-d_out).mean()
g_loss.backward()
