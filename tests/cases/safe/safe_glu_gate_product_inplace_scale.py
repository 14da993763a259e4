# label: safe
# why: the in-place scale and bias act on the product `value * gate`, and mul saves its inputs, not its output.
import torch
import torch.nn as nn

torch.manual_seed(0)


class ScaledGLU(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.value = nn.Linear(dim, hidden)
        self.gate = nn.Linear(dim, hidden)
        self.bias = nn.Parameter(torch.zeros(hidden))
        self.out = nn.Linear(hidden, dim)
        self.scale = hidden ** -0.5

    def forward(self, x):
        gate = torch.sigmoid(self.gate(x))
        hidden = self.value(x) * gate
        hidden.mul_(self.scale)
        hidden.add_(self.bias)
        return self.out(hidden)


glu = ScaledGLU(5, 9)
tokens = torch.randn(3, 4, 5)
out = glu(tokens)
out.pow(2).mean().backward()
