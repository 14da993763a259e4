# label: safe
# why: add_noise_ mutates its argument, but the caller passes it a fresh clone and keeps the original batch as the clean target.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

denoiser = nn.Sequential(nn.Linear(12, 6), nn.ReLU(), nn.Linear(6, 12))


def add_noise_(t, std):
    t.add_(torch.randn_like(t) * std)
    return t


clean = torch.randn(16, 12)
noisy = add_noise_(clean.clone(), 0.5)
recon = denoiser(noisy)
loss = F.mse_loss(recon, clean)
loss.backward()
