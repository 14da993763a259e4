# label: hazard silent
# why: add_gaussian_noise mutates its argument, so the "clean" target the caller compares against is noisy too.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def add_gaussian_noise(images, std):
    noise = torch.randn_like(images) * std
    images.add_(noise)  # <-- IPL004: caller still uses the clean images
    return images


class DenoisingAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(16, 6)
        self.dec = nn.Linear(6, 16)

    def forward(self, x):
        return self.dec(F.relu(self.enc(x)))


autoencoder = DenoisingAE()
clean = torch.rand(8, 16)
noisy = add_gaussian_noise(clean, 0.2)
reconstruction = autoencoder(noisy)
loss = F.mse_loss(reconstruction, clean)
loss.backward()
