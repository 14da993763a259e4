# label: hazard raises
# why: `h * self.gate` saves h to compute the gate's gradient; h.add_ then overwrites it
import torch
import torch.nn as nn

torch.manual_seed(0)


class GatedBias(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.gate = nn.Parameter(torch.rand(dim))
        self.bias = nn.Parameter(torch.randn(dim))

    def forward(self, x):
        h = self.fc(x)
        gated = h * self.gate
        h.add_(self.bias)  # <-- IPL001
        return gated + h


mod = GatedBias(4)
x = torch.randn(2, 4)
loss = mod(x).sum()
loss.backward()
