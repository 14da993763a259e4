# label: safe
# why: with Detect.inplace=False (the branch quoted in the thread, used for export) the boxes are decoded out of place and concatenated, so the saved sigmoid output stays intact and the patch gradient is well defined
# source: https://github.com/sophgo/sophon-demo/issues/19
import torch
import torch.nn as nn

torch.manual_seed(0)


class Detect(nn.Module):
    stride = None
    onnx_dynamic = False

    def __init__(self, nc=2, anchors=(), ch=(), inplace=False):
        super().__init__()
        self.nc = nc
        self.no = nc + 5
        self.nl = len(anchors)
        self.na = len(anchors[0]) // 2
        self.grid = [torch.zeros(1)] * self.nl
        self.anchor_grid = [torch.zeros(1)] * self.nl
        self.register_buffer('anchors', torch.tensor(anchors).float().view(self.nl, -1, 2))
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)
        self.inplace = inplace

    def forward(self, x):
        z = []
        for i in range(self.nl):
            x[i] = self.m[i](x[i])
            bs, _, ny, nx = x[i].shape
            x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()

            if not self.training:
                if self.onnx_dynamic or self.grid[i].shape[2:4] != x[i].shape[2:4]:
                    self.grid[i], self.anchor_grid[i] = self._make_grid(nx, ny, i)

                y = x[i].sigmoid()
                if self.inplace:
                    y[..., 0:2] = (y[..., 0:2] * 2 - 0.5 + self.grid[i]) * self.stride[i]
                    y[..., 2:4] = (y[..., 2:4] * 2) ** 2 * self.anchor_grid[i]
                else:
                    xy = (y[..., 0:2] * 2 - 0.5 + self.grid[i]) * self.stride[i]
                    wh = (y[..., 2:4] * 2) ** 2 * self.anchor_grid[i]
                    y = torch.cat((xy, wh, y[..., 4:]), -1)
                z.append(y.view(bs, -1, self.no))

        return x if self.training else (torch.cat(z, 1), x)

    def _make_grid(self, nx=20, ny=20, i=0):
        yv, xv = torch.meshgrid(torch.arange(ny), torch.arange(nx), indexing='ij')
        grid = torch.stack((xv, yv), 2).expand((1, self.na, ny, nx, 2)).float()
        anchor_grid = (self.anchors[i].clone() * self.stride[i]).view((1, self.na, 1, 1, 2)).expand((1, self.na, ny, nx, 2)).float()
        return grid, anchor_grid


class TinyYolo(nn.Module):
    def __init__(self):
        super().__init__()
        self.b1 = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.SiLU())
        self.b2 = nn.Sequential(nn.Conv2d(8, 16, 3, 2, 1), nn.SiLU())
        self.detect = Detect(nc=2, anchors=((10, 13, 16, 30), (30, 61, 62, 45)), ch=(8, 16))
        self.detect.stride = torch.tensor([2., 4.])

    def forward(self, img):
        p3 = self.b1(img)
        p4 = self.b2(p3)
        return self.detect([p3, p4])


model = TinyYolo().eval()
for p in model.parameters():
    p.requires_grad_(False)

image = torch.rand(1, 3, 16, 16)
patch = torch.full((1, 3, 6, 6), 0.5, requires_grad=True)
mask = torch.zeros(1, 3, 16, 16)
mask[..., 5:11, 5:11] = 1.0
padded = torch.nn.functional.pad(patch, (5, 5, 5, 5))
adv = image * (1 - mask) + padded * mask

pred, _ = model(adv)
obj_loss = pred[..., 4].max()
obj_loss.backward()
