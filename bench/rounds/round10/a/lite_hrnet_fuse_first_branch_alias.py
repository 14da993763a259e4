# label: hazard silent
# why: for i == 0 the fuse loop starts with y = out[0] (an alias) and `y += out[j]` doubles out[0] in place, so the next output branch reads the already-modified out[0]
# source: https://github.com/HRNet/Lite-HRNet/issues/64
import torch
import torch.nn as nn

torch.manual_seed(0)


class LiteHRModule(nn.Module):
    def __init__(self, num_branches=2, in_channels=(4, 8), with_fuse=True):
        super().__init__()
        self.num_branches = num_branches
        self.in_channels = in_channels
        self.with_fuse = with_fuse
        self.branches = nn.ModuleList([
            nn.Sequential(nn.Conv2d(c, c, 3, padding=1, groups=c, bias=False), nn.BatchNorm2d(c),
                          nn.Conv2d(c, c, 1, bias=False), nn.BatchNorm2d(c))
            for c in in_channels])
        self.fuse_layers = self._make_fuse_layers()
        self.relu = nn.ReLU()

    def _make_fuse_layers(self):
        num_branches = self.num_branches
        in_channels = self.in_channels
        fuse_layers = []
        for i in range(num_branches):
            fuse_layer = []
            for j in range(num_branches):
                if j > i:
                    fuse_layer.append(nn.Sequential(
                        nn.Conv2d(in_channels[j], in_channels[i], 1, bias=False),
                        nn.BatchNorm2d(in_channels[i]),
                        nn.Upsample(scale_factor=2 ** (j - i), mode='nearest')))
                elif j == i:
                    fuse_layer.append(None)
                else:
                    fuse_layer.append(nn.Sequential(
                        nn.Conv2d(in_channels[j], in_channels[j], 3, 2, 1, groups=in_channels[j], bias=False),
                        nn.BatchNorm2d(in_channels[j]),
                        nn.Conv2d(in_channels[j], in_channels[i], 1, bias=False),
                        nn.BatchNorm2d(in_channels[i])))
            fuse_layers.append(nn.ModuleList(fuse_layer))
        return nn.ModuleList(fuse_layers)

    def forward(self, x):
        out = [self.branches[i](x[i]) for i in range(self.num_branches)]
        if self.with_fuse:
            out_fuse = []
            for i in range(len(self.fuse_layers)):
                y = out[0] if i == 0 else self.fuse_layers[i][0](out[0])
                for j in range(self.num_branches):
                    if i == j:
                        y += out[j]  # <-- IPL002: for i == 0, y aliases out[0]; the add doubles out[0], which fuse_layers[1][0] reads afterwards
                    else:
                        y += self.fuse_layers[i][j](out[j])
                out_fuse.append(self.relu(y))
            out = out_fuse
        return out


module = LiteHRModule()
x = [torch.randn(2, 4, 8, 8), torch.randn(2, 8, 4, 4)]
out = module(x)
heatmap_hi, heatmap_lo = out[0], out[1]
loss = heatmap_hi.mean() + heatmap_lo.pow(2).mean()
loss.backward()
