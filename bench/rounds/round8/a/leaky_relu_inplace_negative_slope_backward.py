# label: hazard raises
# why: the activation is applied with the in-place leaky_relu_ and a negative slope, whose backward cannot be recovered from the overwritten output.
# source: https://github.com/pytorch/pytorch/issues/31938
import torch
import torch.nn as nn

torch.manual_seed(0)


class ConcatReLUBlock(nn.Module):
    """conv followed by a leaky activation with a configurable (possibly negative) slope"""

    def __init__(self, slope):
        super().__init__()
        self.conv = nn.Conv2d(2, 2, 3, padding=1)
        self.slope = slope

    def forward(self, x):
        h = self.conv(x)
        return torch.nn.functional.leaky_relu_(h.clone(), self.slope)  # <-- IPL001: in-place leaky relu with negative slope overwrites the value its backward needs


a = torch.tensor([-1.0, 1.0], requires_grad=True)
b = torch.nn.functional.leaky_relu_(a.clone(), -2)  # <-- IPL001: in-place leaky relu with negative slope overwrites the value its backward needs
b.backward(torch.ones(2))

block = ConcatReLUBlock(-0.5)
img = torch.rand(1, 2, 4, 4)
out = block(img)
out.sum().backward()
