# label: hazard raises
# why: self.act (ReLU inplace=True) is applied to the block input after the projection shortcut Linear saved it.
import torch
from torch import nn

torch.manual_seed(0)


class PreActBlock(nn.Module):
    def __init__(self, in_dim, out_dim):
        super().__init__()
        self.shortcut = nn.Linear(in_dim, out_dim, bias=False)
        self.fc1 = nn.Linear(in_dim, out_dim)
        self.fc2 = nn.Linear(out_dim, out_dim)
        self.norm = nn.LayerNorm(out_dim)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        shortcut = self.shortcut(x)
        out = self.act(x)  # <-- IPL001: x was saved by the shortcut Linear
        out = self.fc1(out)
        out = self.fc2(torch.relu(self.norm(out)))
        return out + shortcut


stem = nn.Linear(5, 6)
block = PreActBlock(6, 8)
inputs = torch.randn(4, 5)
hidden = stem(inputs) + 0.1
outputs = block(hidden)
outputs.sum().backward()
