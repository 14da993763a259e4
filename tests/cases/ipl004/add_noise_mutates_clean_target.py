# label: hazard silent
# why: add_noise writes the noise into its argument, so the denoising autoencoder's reconstruction target `clean` is the noisy batch too
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def add_noise(x, std):
    x.add_(torch.randn_like(x) * std)  # <-- IPL004
    return x


autoencoder = nn.Sequential(nn.Linear(8, 3), nn.ReLU(), nn.Linear(3, 8))
clean = torch.rand(16, 8)

noisy = add_noise(clean, 0.3)
recon = autoencoder(noisy)
loss = F.mse_loss(recon, clean)
loss.backward()
