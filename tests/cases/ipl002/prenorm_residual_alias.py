# label: hazard silent
# why: `residual = hidden` only aliases the LayerNorm output, so the in-place scaling also changes the residual branch.
import torch
from torch import nn
from torch.nn.functional import gelu

torch.manual_seed(0)


class PreNormFFN(nn.Module):
    def __init__(self, dim, hidden, scale):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)
        self.scale = scale

    def forward(self, x):
        hidden = self.norm(x)
        residual = hidden
        hidden.mul_(self.scale)  # <-- IPL002: residual is the same tensor
        return self.fc2(gelu(self.fc1(hidden))) + residual


layer = PreNormFFN(8, 16, 0.5)
tokens = torch.randn(3, 4, 8)
out = layer(tokens)
loss = out.pow(2).mean()
loss.backward()
