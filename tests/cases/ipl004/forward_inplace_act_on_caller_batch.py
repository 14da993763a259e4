# label: hazard silent
# why: forward applies an inplace LeakyReLU to its input argument, so the caller's batch (reused as the reconstruction target) is rectified too
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(6, 3)
        self.dec = nn.Linear(3, 6)

    def forward(self, x):
        x = F.leaky_relu(x, 0.1, inplace=True)  # <-- IPL004
        return self.dec(torch.tanh(self.enc(x)))


ae = AutoEncoder()
batch = torch.randn(8, 6)
recon = ae(batch)
loss = F.mse_loss(recon, batch)
loss.backward()
