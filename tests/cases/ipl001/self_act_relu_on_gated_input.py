# label: hazard raises
# why: the mul h * gate saved h, and self.act (ReLU with inplace=True, built in __init__) later rewrites h in forward.
import torch
import torch.nn as nn

torch.manual_seed(0)


class GatedResidual(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.g = nn.Linear(dim, dim)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        h = self.fc(x)
        out = h * torch.sigmoid(self.g(x))
        h = self.act(h)  # <-- IPL001
        return out + h


block = GatedResidual(5)
x = torch.randn(3, 5)
y = block(x)
y.sum().backward()
