# label: safe
# why: add_noise clones its argument before the in-place add, so the caller's clean target is untouched
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def add_noise(x, std):
    x = x.clone()
    x.add_(torch.randn_like(x) * std)
    return x


autoencoder = nn.Sequential(nn.Linear(8, 3), nn.ReLU(), nn.Linear(3, 8))
clean = torch.rand(16, 8)
noisy = add_noise(clean, 0.3)
recon = autoencoder(noisy)
loss = F.mse_loss(recon, clean)
loss.backward()
