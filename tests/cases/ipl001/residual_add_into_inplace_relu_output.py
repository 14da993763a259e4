# label: hazard raises
# why: `out += shortcut` writes into the output of an inplace ReLU, which ReluBackward saved (unlike ResNet, where += happens before the ReLU)
import torch
import torch.nn as nn

torch.manual_seed(0)


class ResMLP(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.fc1 = nn.Linear(dim, dim)
        self.act = nn.ReLU(inplace=True)
        self.fc2 = nn.Linear(dim, dim)

    def forward(self, x):
        shortcut = self.proj(x)
        out = self.fc1(x)
        out = self.act(out)
        out += shortcut  # <-- IPL001
        return self.fc2(out)


block = ResMLP(8)
x = torch.randn(3, 8)
loss = block(x).pow(2).sum()
loss.backward()
