# label: hazard silent
# why: the public forward adds the positional table in place to the caller's token features, so the caller's later reconstruction target silently includes the positions.
import torch
import torch.nn as nn
import torch.nn.functional as F


class AddPositionEmbs(nn.Module):
    """Learned 1D positional embedding (flax/vit-jax port)."""

    def __init__(self, seq_len, dim):
        super().__init__()
        self.pos_embedding = nn.Parameter(torch.randn(1, seq_len, dim) * 0.1)

    def forward(self, inputs):
        inputs += self.pos_embedding  # <-- IPL004: writes into the caller's tensor
        return inputs


class Encoder(nn.Module):
    def __init__(self, seq_len, dim):
        super().__init__()
        self.pos = AddPositionEmbs(seq_len, dim)
        self.mlp = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))

    def forward(self, x):
        x = self.pos(x)
        return x + self.mlp(x)


torch.manual_seed(0)
enc = Encoder(5, 6)
features = torch.randn(3, 5, 6)
recon = enc(features)
# masked-autoencoder style: reconstruct the original (position-free) features
loss = F.mse_loss(recon, features)
loss.backward()
