# label: hazard raises
# why: w is just another name for the Parameter self.weight; multiplying it by the pruning mask in forward is an in-place op on a leaf
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MaskedLinear(nn.Linear):
    def __init__(self, cin, cout):
        super().__init__(cin, cout)
        self.register_buffer("mask", (torch.rand(cout, cin) > 0.5).float())

    def forward(self, x):
        w = self.weight
        w.mul_(self.mask)  # <-- IPL003
        return F.linear(x, w, self.bias)


layer = MaskedLinear(5, 3)
x = torch.randn(4, 5)
out = layer(x)
loss = out.sum()
loss.backward()
