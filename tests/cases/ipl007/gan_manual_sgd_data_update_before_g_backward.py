# label: hazard silent
# why: the discriminator is stepped by hand through p.data before the generator loss is back-propagated, so the generator's gradients flow through the updated weights without any version-counter error.
import torch
import torch.nn as nn

torch.manual_seed(0)

G = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 3))
D = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
z = torch.randn(5, 2)
real = torch.randn(5, 3)
lr = 0.5

fake = G(z)
d_fake = D(fake)
loss_d = D(real).mean() - d_fake.mean()
loss_g = -d_fake.mean()

D.zero_grad()
loss_d.backward(retain_graph=True)
for p in D.parameters():
    p.data.sub_(lr * p.grad)  # <-- IPL007

G.zero_grad()
loss_g.backward(inputs=list(G.parameters()))
grad_g0 = G[0].weight.grad
grad_g2 = G[2].weight.grad
