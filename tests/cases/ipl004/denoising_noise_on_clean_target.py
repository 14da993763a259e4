# label: hazard silent
# why: add_noise corrupts the caller's batch in place, so the denoising loss compares the reconstruction against the noisy input instead of the clean target.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

autoencoder = nn.Sequential(nn.Linear(12, 4), nn.ReLU(), nn.Linear(4, 12))


def add_noise(batch, std):
    batch.add_(torch.randn_like(batch) * std)  # <-- IPL004: batch is reused as the clean target
    return autoencoder(batch)


batch = torch.randn(16, 12)
recon = add_noise(batch, 0.5)
loss = F.mse_loss(recon, batch)
loss.backward()
