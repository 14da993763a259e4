# label: hazard raises
# why: Detect writes the decoded xy/wh back into y = x[i].sigmoid() by slice assignment, but sigmoid saved y for its backward, so back-propagating an adversarial loss to the image fails
# source: https://github.com/WongKinYiu/yolov7/issues/1527
import torch
import torch.nn as nn

torch.manual_seed(0)


class Detect(nn.Module):
    stride = None

    def __init__(self, nc=2, anchors=(), ch=()):
        super().__init__()
        self.nc = nc
        self.no = nc + 5
        self.nl = len(anchors)
        self.na = len(anchors[0]) // 2
        self.grid = [torch.zeros(1)] * self.nl
        a = torch.tensor(anchors).float().view(self.nl, -1, 2)
        self.register_buffer('anchors', a)
        self.register_buffer('anchor_grid', a.clone().view(self.nl, 1, -1, 1, 1, 2))
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)
        self.export = False

    def forward(self, x):
        z = []
        self.training |= self.export
        for i in range(self.nl):
            x[i] = self.m[i](x[i])
            bs, _, ny, nx = x[i].shape
            x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
            if not self.training:
                if self.grid[i].shape[2:4] != x[i].shape[2:4]:
                    self.grid[i] = self._make_grid(nx, ny)
                y = x[i].sigmoid()
                y[..., 0:2] = (y[..., 0:2] * 2. - 0.5 + self.grid[i]) * self.stride[i]  # <-- IPL001: sigmoid output saved for backward is overwritten
                y[..., 2:4] = (y[..., 2:4] * 2) ** 2 * self.anchor_grid[i]  # <-- IPL001: sigmoid output saved for backward is overwritten
                z.append(y.view(bs, -1, self.no))
        return x if self.training else (torch.cat(z, 1), x)

    @staticmethod
    def _make_grid(nx=20, ny=20):
        yv, xv = torch.meshgrid([torch.arange(ny), torch.arange(nx)], indexing='ij')
        return torch.stack((xv, yv), 2).view((1, 1, ny, nx, 2)).float()


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.ModuleList([nn.Conv2d(3, 8, 3, 2, 1), nn.Conv2d(8, 16, 3, 2, 1)])
        self.detect = Detect(anchors=((10, 13, 16, 30), (30, 61, 62, 45)), ch=(8, 16))
        self.detect.stride = torch.tensor([2., 4.])

    def forward(self, img):
        f1 = torch.relu(self.backbone[0](img))
        f2 = torch.relu(self.backbone[1](f1))
        return self.detect([f1, f2])


model = Model().eval()
image = torch.rand(1, 3, 16, 16, requires_grad=True)
pred, _ = model(image)
obj_conf = pred[..., 4]
loss = obj_conf.max()
loss.backward()
image_grad = image.grad
