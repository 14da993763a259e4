# label: hazard raises
# why: `std += eps` writes into the output of sqrt(), which SqrtBackward saved
import torch
import torch.nn as nn

torch.manual_seed(0)


class ManualLayerNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim))

    def forward(self, x):
        mu = x.mean(-1, keepdim=True)
        var = (x - mu).pow(2).mean(-1, keepdim=True)
        std = var.sqrt()
        std += self.eps  # <-- IPL001
        return self.weight * (x - mu) / std + self.bias


norm = ManualLayerNorm(10)
proj = nn.Linear(10, 10)
x = torch.randn(5, 10)
y = norm(proj(x))
loss = (y * torch.arange(10.0)).sum()
loss.backward()
