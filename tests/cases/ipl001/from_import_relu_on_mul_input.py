# label: hazard raises
# why: gate * val saved val for backward, and relu(val, inplace=True) (imported from torch.nn.functional) then rewrites it.
import torch
import torch.nn as nn
from torch import sigmoid
from torch.nn.functional import relu

torch.manual_seed(0)


class GatedUnit(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.w_gate = nn.Linear(dim, dim)
        self.w_val = nn.Linear(dim, dim)

    def forward(self, x):
        gate = sigmoid(self.w_gate(x))
        val = self.w_val(x)
        gated = gate * val
        val = relu(val, inplace=True)  # <-- IPL001: val is an input saved by the mul above
        return gated + 0.1 * val


unit = GatedUnit(6)
x = torch.randn(4, 6)
out = unit(x)
out.sum().backward()
