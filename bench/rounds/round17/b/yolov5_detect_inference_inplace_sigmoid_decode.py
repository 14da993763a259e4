# label: hazard raises
# why: in eval mode Detect decodes boxes by slice-assigning xy/wh back into y, the sigmoid output that SigmoidBackward saved, so differentiating the detections w.r.t. the image (e.g. for an adversarial attack) fails.
# source: https://github.com/ultralytics/yolov5/commit/41f5cc563776853e167e3f95323cfa1ac22d6272
import torch
import torch.nn as nn

torch.manual_seed(0)


class Detect(nn.Module):
    stride = None
    export = False

    def __init__(self, nc=80, anchors=(), ch=()):
        super(Detect, self).__init__()
        self.nc = nc
        self.no = nc + 5
        self.nl = len(anchors)
        self.na = len(anchors[0]) // 2
        self.grid = [torch.zeros(1)] * self.nl
        a = torch.tensor(anchors).float().view(self.nl, -1, 2)
        self.register_buffer("anchors", a)
        self.register_buffer("anchor_grid", a.clone().view(self.nl, 1, -1, 1, 1, 2))
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)

    def forward(self, x):
        z = []
        self.training |= self.export
        for i in range(self.nl):
            x[i] = self.m[i](x[i])
            bs, _, ny, nx = x[i].shape
            x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
            if not self.training:
                if self.grid[i].shape[2:4] != x[i].shape[2:4]:
                    self.grid[i] = self._make_grid(nx, ny).to(x[i].device)
                y = x[i].sigmoid()
                y[..., 0:2] = (y[..., 0:2] * 2. - 0.5 + self.grid[i]) * self.stride[i]  # <-- IPL001: overwrites the sigmoid output saved for backward
                y[..., 2:4] = (y[..., 2:4] * 2) ** 2 * self.anchor_grid[i]  # <-- IPL001: overwrites the sigmoid output saved for backward
                z.append(y.view(bs, -1, self.no))
        return x if self.training else (torch.cat(z, 1), x)

    @staticmethod
    def _make_grid(nx=20, ny=20):
        yv, xv = torch.meshgrid([torch.arange(ny), torch.arange(nx)], indexing="ij")
        return torch.stack((xv, yv), 2).view((1, 1, ny, nx, 2)).float()


class Model(nn.Module):
    def __init__(self, nc=3, anchors=((10, 13, 16, 30), (30, 61, 62, 45)), ch=(8, 16)):
        super(Model, self).__init__()
        self.model = nn.ModuleList([nn.Conv2d(3, ch[0], 3, 2, 1), nn.Conv2d(ch[0], ch[1], 3, 2, 1), Detect(nc, anchors, ch)])
        self.model[-1].stride = torch.tensor([2.0, 4.0])

    def forward(self, x):
        p3 = torch.relu(self.model[0](x))
        p4 = torch.relu(self.model[1](p3))
        return self.model[-1]([p3, p4])


model = Model()
model.eval()
img = torch.rand(1, 3, 16, 16, requires_grad=True)
pred, _ = model(img)
obj_score = pred[..., 4].max()
obj_score.backward()
adv_img = (img + 0.01 * img.grad.sign()).clamp(0, 1).detach()
