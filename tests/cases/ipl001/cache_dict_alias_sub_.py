# label: hazard raises
# why: cache["gate"] is the sigmoid output used in the product; subtracting in place through the dict entry corrupts the saved value
import torch
import torch.nn as nn

torch.manual_seed(0)


class GatedUnit(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.value = nn.Linear(dim, dim)
        self.gate = nn.Linear(dim, dim)

    def forward(self, x, cache):
        cache["gate"] = torch.sigmoid(self.gate(x))
        out = self.value(x) * cache["gate"]
        cache["gate"].sub_(0.5)  # <-- IPL001
        return out


unit = GatedUnit(4)
cache = {}
x = torch.randn(3, 4)
y = unit(x, cache)
loss = y.sum()
loss.backward()
