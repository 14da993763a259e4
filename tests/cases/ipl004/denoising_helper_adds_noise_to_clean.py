# label: hazard silent
# why: add_noise writes the noise into its argument in place, so the caller's `clean` target is corrupted and the denoiser learns to reproduce its noisy input.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def add_noise(x, sigma=0.3):
    noise = torch.randn_like(x) * sigma
    x.add_(noise)  # <-- IPL004
    return x


model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 6))
clean = torch.rand(4, 6)

noisy = add_noise(clean)
recon = model(noisy)
loss = F.mse_loss(recon, clean)
loss.backward()
grad_first = model[0].weight.grad
