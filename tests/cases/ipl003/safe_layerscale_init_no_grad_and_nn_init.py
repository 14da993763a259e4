# label: safe no-twin
# why: parameters are initialised in __init__ through nn.init.*_ helpers (which run under no_grad internally) and an explicit `with torch.no_grad():` fill_, so no grad-mode in-place write touches a leaf.
import torch
import torch.nn as nn

torch.manual_seed(0)


class LayerScale(nn.Module):
    def __init__(self, dim, init_value=1e-4):
        super().__init__()
        self.gamma = nn.Parameter(torch.empty(dim))
        with torch.no_grad():
            self.gamma.fill_(init_value)

    def forward(self, x):
        return x * self.gamma


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc1 = nn.Linear(dim, 2 * dim)
        self.fc2 = nn.Linear(2 * dim, dim)
        nn.init.trunc_normal_(self.fc1.weight, std=0.02)
        nn.init.zeros_(self.fc1.bias)
        nn.init.xavier_uniform_(self.fc2.weight)
        nn.init.constant_(self.fc2.bias, 0.0)
        self.ls = LayerScale(dim)

    def forward(self, x):
        return x + self.ls(self.fc2(torch.relu(self.fc1(x))))


block = Block(8)
x = torch.randn(3, 8)
out = block(x)
out.sum().backward()
