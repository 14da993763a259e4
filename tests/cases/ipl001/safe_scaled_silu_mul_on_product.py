# label: safe
# why: x * sigmoid(x) saves its two inputs, not the product, so scaling the product with mul_ is safe.
import torch
import torch.nn as nn

torch.manual_seed(0)


class ScaledSiLU(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc_in = nn.Linear(dim, 2 * dim)
        self.fc_out = nn.Linear(2 * dim, dim)
        self.gain = nn.Parameter(torch.tensor(1.7))

    def forward(self, x):
        h = self.fc_in(x)
        a = h * torch.sigmoid(h)
        a.mul_(self.gain)
        return self.fc_out(a)


mod = ScaledSiLU(4)
x = torch.randn(5, 4)
y = mod(x)
y.pow(2).mean().backward()
