# label: hazard raises
# why: L2Norm divides x by its norm in place, but x was saved by pow() to compute that norm, so backward finds it modified.
# source: https://github.com/lzx1413/PytorchSSD/issues/72
import torch
import torch.nn as nn
import torch.nn.init as init

torch.manual_seed(0)


class L2Norm(nn.Module):
    def __init__(self, n_channels, scale):
        super(L2Norm, self).__init__()
        self.n_channels = n_channels
        self.gamma = scale or None
        self.eps = 1e-10
        self.weight = nn.Parameter(torch.Tensor(self.n_channels))
        self.reset_parameters()

    def reset_parameters(self):
        init.constant_(self.weight, self.gamma)

    def forward(self, x):
        norm = x.pow(2).sum(dim=1, keepdim=True).sqrt() + self.eps
        x /= norm  # <-- IPL001: x was saved by pow() for the norm's backward
        out = self.weight.unsqueeze(0).unsqueeze(2).unsqueeze(3).expand_as(x) * x
        return out


class TinyVGGHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv4_3 = nn.Conv2d(3, 8, 3, padding=1)
        self.L2Norm = L2Norm(8, 20)
        self.loc = nn.Conv2d(8, 4, 3, padding=1)

    def forward(self, x):
        sources = []
        x = self.conv4_3(x)
        s = self.L2Norm(x)
        sources.append(s)
        loc = [self.loc(src).permute(0, 2, 3, 1).contiguous() for src in sources]
        return torch.cat([o.view(o.size(0), -1) for o in loc], 1)


net = TinyVGGHead()
images = torch.randn(2, 3, 6, 6)
loc_preds = net(images)
loss = loc_preds.pow(2).mean()
loss.backward()
