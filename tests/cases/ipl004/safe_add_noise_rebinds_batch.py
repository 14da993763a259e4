# label: safe
# why: add_noise rebinds its parameter to `batch + noise` instead of mutating, so the caller's clean batch is still a valid denoising target.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

autoencoder = nn.Sequential(nn.Linear(12, 4), nn.ReLU(), nn.Linear(4, 12))


def add_noise(batch, std):
    batch = batch + torch.randn_like(batch) * std
    return autoencoder(batch)


batch = torch.randn(16, 12)
recon = add_noise(batch, 0.5)
loss = F.mse_loss(recon, batch)
loss.backward()
