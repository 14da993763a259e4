# label: hazard raises
# why: with a single-class model the inference decode applies sigmoid_ to io[..., 4:] and then forces io[..., 5] = 1, overwriting part of the sigmoid result saved for backward, so attacking the decoded output fails
# source: https://github.com/tanluren/yolov3-channel-and-layer-pruning/blob/162bed8f2f68eb8235bf6d34992384e01c4d1fa5/models.py
import torch
import torch.nn as nn

torch.manual_seed(0)


def create_grids(self, img_size=416, ng=(13, 13), device='cpu', type=torch.float32):
    nx, ny = ng
    self.img_size = max(img_size)
    self.stride = self.img_size / max(ng)
    yv, xv = torch.meshgrid([torch.arange(ny), torch.arange(nx)], indexing='ij')
    self.grid_xy = torch.stack((xv, yv), 2).to(device).type(type).view((1, 1, ny, nx, 2))
    self.anchor_vec = self.anchors.to(device) / self.stride
    self.anchor_wh = self.anchor_vec.view(1, self.na, 1, 1, 2).to(device).type(type)
    self.nx = nx
    self.ny = ny


class YOLOLayer(nn.Module):
    def __init__(self, anchors, nc, arc):
        super().__init__()
        self.anchors = torch.Tensor(anchors)
        self.na = len(anchors)
        self.nc = nc
        self.nx = 0
        self.ny = 0
        self.arc = arc

    def forward(self, p, img_size):
        bs, ny, nx = p.shape[0], p.shape[-2], p.shape[-1]
        if (self.nx, self.ny) != (nx, ny):
            create_grids(self, img_size, (nx, ny), p.device, p.dtype)
        p = p.view(bs, self.na, self.nc + 5, self.ny, self.nx).permute(0, 1, 3, 4, 2).contiguous()
        if self.training:
            return p
        io = p.clone()
        io[..., 0:2] = torch.sigmoid(io[..., 0:2]) + self.grid_xy
        io[..., 2:4] = torch.exp(io[..., 2:4]) * self.anchor_wh
        io[..., :4] *= self.stride
        if 'default' in self.arc:
            torch.sigmoid_(io[..., 4:])
        if self.nc == 1:
            io[..., 5] = 1  # <-- IPL001: overwrites the class column of the sigmoid_ result saved for backward
        return io.view(bs, -1, 5 + self.nc), p


class Darknet(nn.Module):
    def __init__(self):
        super().__init__()
        self.module_list = nn.ModuleList([
            nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1, bias=False), nn.BatchNorm2d(8), nn.LeakyReLU(0.1, inplace=True)),
            nn.Sequential(nn.Conv2d(8, 3 * (1 + 5), 1)),
            YOLOLayer(anchors=[[10., 13.], [16., 30.], [33., 23.]], nc=1, arc='default'),
        ])

    def forward(self, x):
        img_size = x.shape[-2:]
        x = self.module_list[0](x)
        x = self.module_list[1](x)
        return self.module_list[2](x, img_size)


model = Darknet().eval()
patch = torch.rand(1, 3, 4, 4, requires_grad=True)
img = torch.rand(1, 3, 16, 16)
img = torch.cat([img[..., :4], torch.cat([patch, img[:, :, 4:, 4:8]], 2), img[..., 8:]], 3)
io, p = model(img)
obj_loss = io[..., 4].max()
obj_loss.backward()
patch_grad = patch.grad
