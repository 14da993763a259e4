# label: hazard raises no-twin
# why: LayerScale's __init__ fills its freshly created nn.Parameter in place without torch.no_grad(), so merely constructing the block raises the leaf in-place error.
import torch
import torch.nn as nn

torch.manual_seed(0)


class LayerScale(nn.Module):
    def __init__(self, dim, init_value=1e-4):
        super().__init__()
        self.gamma = nn.Parameter(torch.empty(dim))
        self.gamma.fill_(init_value)  # <-- IPL003: Parameter requires grad, not under no_grad

    def forward(self, x):
        return x * self.gamma


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
        self.ls = LayerScale(dim)

    def forward(self, x):
        return x + self.ls(self.mlp(self.norm(x)))


block = Block(8)
x = torch.randn(2, 5, 8)
out = block(x)
out.pow(2).mean().backward()
