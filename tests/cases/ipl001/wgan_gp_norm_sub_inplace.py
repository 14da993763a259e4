# label: hazard raises
# why: the gradient norm is the output of norm(), which saves its result for backward; sub_(1) overwrites it before gp.backward()
import torch
import torch.nn as nn

torch.manual_seed(0)
critic = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1))
opt = torch.optim.Adam(critic.parameters(), lr=1e-4, betas=(0.0, 0.9))

real = torch.randn(5, 8)
fake = torch.randn(5, 8)
lambda_gp = 10.0


def gradient_penalty(critic, real, fake):
    alpha = torch.rand(real.size(0), 1)
    interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    scores = critic(interp)
    grads = torch.autograd.grad(scores.sum(), interp, create_graph=True)[0]
    grad_norm = grads.norm(2, dim=1)
    grad_norm.sub_(1.0)  # <-- IPL001
    return grad_norm.pow(2).mean()


w_dist = critic(real).mean() - critic(fake).mean()
gp = gradient_penalty(critic, real, fake)
loss = -w_dist + lambda_gp * gp

opt.zero_grad()
loss.backward()
opt.step()

critic_w = critic[0].weight.detach().clone()
critic_grad = critic[0].weight.grad.clone()
