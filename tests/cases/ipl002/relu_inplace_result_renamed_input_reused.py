# label: hazard silent
# why: `y = F.relu(x, inplace=True)` binds the result to a new name, but x itself is then fed to the skip projection expecting pre-activation values
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SkipMLP(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.net = nn.Linear(dim, dim)
        self.skip = nn.Linear(dim, dim)

    def forward(self, inp):
        x = self.fc(inp)
        y = F.relu(x, inplace=True)  # <-- IPL002
        z = self.skip(x)
        return self.net(y) + z


model = SkipMLP(6)
inp = torch.randn(4, 6)
out = model(inp)
loss = out.pow(2).sum()
loss.backward()
