# label: hazard raises
# why: xc * xc saved xc for the variance, then xc.div_() normalises it in place.
import torch
import torch.nn as nn

torch.manual_seed(0)


class MyLayerNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim))
        self.eps = eps

    def forward(self, x):
        mu = x.mean(-1, keepdim=True)
        xc = x - mu
        var = (xc * xc).mean(-1, keepdim=True)
        xc.div_(torch.sqrt(var + self.eps))  # <-- IPL001: the mul above saved xc
        return xc * self.weight + self.bias


ln = MyLayerNorm(10)
proj = nn.Linear(10, 10)
x = torch.randn(4, 10)
out = ln(proj(x))
out.sum().backward()
