# label: hazard raises
# why: in eval mode Detect decodes boxes by writing into y = x[i].sigmoid() in place; sigmoid saved y for backward, so backpropagating an adversarial-patch loss through the decoded output fails (SigmoidBackward output at version 2)
# source: https://github.com/ultralytics/yolov5/issues/671 (models/yolo.py Detect.forward, Aug 2020; same report: https://github.com/WongKinYiu/yolov7/issues/1527)
import torch
import torch.nn as nn

torch.manual_seed(0)


class Detect(nn.Module):
    def __init__(self, nc=2, anchors=(), ch=()):  # detection layer
        super(Detect, self).__init__()
        self.stride = None  # strides computed during build
        self.nc = nc  # number of classes
        self.no = nc + 5  # number of outputs per anchor
        self.nl = len(anchors)  # number of detection layers
        self.na = len(anchors[0]) // 2  # number of anchors
        self.grid = [torch.zeros(1)] * self.nl  # init grid
        a = torch.tensor(anchors).float().view(self.nl, -1, 2)
        self.register_buffer('anchors', a)  # shape(nl,na,2)
        self.register_buffer('anchor_grid', a.clone().view(self.nl, 1, -1, 1, 1, 2))  # shape(nl,1,na,1,1,2)
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)  # output conv
        self.export = False  # onnx export

    def forward(self, x):
        # x = x.copy()  # for profiling
        z = []  # inference output
        self.training |= self.export
        for i in range(self.nl):
            x[i] = self.m[i](x[i])  # conv
            bs, _, ny, nx = x[i].shape  # x(bs,255,20,20) to x(bs,3,20,20,85)
            x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()

            if not self.training:  # inference
                if self.grid[i].shape[2:4] != x[i].shape[2:4]:
                    self.grid[i] = self._make_grid(nx, ny).to(x[i].device)

                y = x[i].sigmoid()
                y[..., 0:2] = (y[..., 0:2] * 2. - 0.5 + self.grid[i].to(x[i].device)) * self.stride[i]  # xy  # <-- IPL001: y is the sigmoid output saved for backward
                y[..., 2:4] = (y[..., 2:4] * 2) ** 2 * self.anchor_grid[i]  # wh  # <-- IPL001: writes into the saved sigmoid output again
                z.append(y.view(bs, -1, self.no))

        return x if self.training else (torch.cat(z, 1), x)

    @staticmethod
    def _make_grid(nx=20, ny=20):
        yv, xv = torch.meshgrid([torch.arange(ny), torch.arange(nx)], indexing='ij')
        return torch.stack((xv, yv), 2).view((1, 1, ny, nx, 2)).float()


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.b1 = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.SiLU())
        self.b2 = nn.Sequential(nn.Conv2d(8, 8, 3, 2, 1), nn.SiLU())
        self.detect = Detect(nc=2, anchors=([10, 13, 16, 30], [30, 61, 62, 45]), ch=(8, 8))
        self.detect.stride = torch.tensor([2., 4.])

    def forward(self, img):
        p3 = self.b1(img)
        p4 = self.b2(p3)
        return self.detect([p3, p4])


model = Model().eval()
for p in model.parameters():
    p.requires_grad_(False)

patch = torch.rand(1, 3, 4, 4, requires_grad=True)
batch = torch.rand(2, 3, 8, 8)
applied = batch.clone()
applied[:, :, 2:6, 2:6] = patch  # paste the adversarial patch

output = model(applied)[0]  # get yolo output
obj_score = output[..., 4] * output[..., 5:].max(-1)[0]
loss = obj_score.max(1)[0].mean()
loss.backward()
