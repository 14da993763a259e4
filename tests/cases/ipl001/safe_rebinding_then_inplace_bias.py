# label: safe
# why: `h = h * mask` rebinds h to a fresh mul output (the mul saved the old tanh output and mask, not its result), so `h += bias` is harmless.
import torch
import torch.nn as nn

torch.manual_seed(0)


class MaskedEncoder(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.bias = nn.Parameter(torch.randn(dim) * 0.1)

    def forward(self, x, mask):
        h = torch.tanh(self.fc(x))
        h = h * mask
        h += self.bias
        return h


enc = MaskedEncoder(6)
x = torch.randn(4, 6)
mask = (torch.rand(4, 6) > 0.2).float()
out = enc(x, mask)
out.pow(2).sum().backward()
