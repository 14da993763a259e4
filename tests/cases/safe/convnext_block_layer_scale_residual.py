# label: safe
# why: the pointwise conv output is not saved by anyone, so layer-scale mul_ and `out += shortcut` in place are correct; the shortcut itself is never written
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ConvNeXtBlock(nn.Module):
    def __init__(self, dim, ls_init=0.5):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, 5, padding=2, groups=dim)
        self.norm = nn.LayerNorm(dim)
        self.pw1 = nn.Linear(dim, 4 * dim)
        self.pw2 = nn.Linear(4 * dim, dim)
        self.gamma = nn.Parameter(ls_init * torch.ones(dim))

    def forward(self, x):
        shortcut = x
        out = self.dwconv(x).permute(0, 2, 3, 1)
        out = self.pw2(F.gelu(self.pw1(self.norm(out))))
        out.mul_(self.gamma)
        out = out.permute(0, 3, 1, 2)
        out += shortcut
        return out


stem = nn.Conv2d(3, 4, 2, stride=2)
block = ConvNeXtBlock(4)
img = torch.randn(2, 3, 8, 8)
x = stem(img)
y = block(x)
loss = y.pow(2).mean() + x.mean()
loss.backward()
gamma_grad = block.gamma.grad
stem_grad = stem.weight.grad
