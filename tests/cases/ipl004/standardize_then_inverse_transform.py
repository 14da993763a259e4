# label: hazard silent
# why: standardize normalises the caller's feature matrix in place, so the later inverse transform uses mean 0 / std 1 instead of the raw statistics.
import torch
import torch.nn as nn

torch.manual_seed(0)


def standardize(x):
    mu = x.mean(dim=0, keepdim=True)
    sd = x.std(dim=0, keepdim=True)
    x.sub_(mu)  # <-- IPL004: caller's raw features
    x.div_(sd)  # <-- IPL004: caller's raw features
    return x


raw = torch.randn(64, 3) * torch.tensor([5.0, 0.2, 30.0]) + torch.tensor([100.0, -1.0, 7.0])
z = standardize(raw)

# a tiny autoencoder working in standardized space
ae = nn.Sequential(nn.Linear(3, 2), nn.Tanh(), nn.Linear(2, 3))
recon_z = ae(z)
loss = (recon_z - z).pow(2).mean()
loss.backward()

# map reconstructions back to physical units
with torch.no_grad():
    recon_raw = recon_z * raw.std(dim=0) + raw.mean(dim=0)
