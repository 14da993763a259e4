# label: hazard raises
# why: Detect's inference branch decodes boxes by writing y[..., 0:4] in place into y = x[i].sigmoid(), whose output sigmoid saved; test-time adaptation then backprops through that branch.
# source: https://github.com/WongKinYiu/yolov7/issues/1935
import torch
import torch.nn as nn

torch.manual_seed(0)


class Detect(nn.Module):
    stride = None

    def __init__(self, nc=2, anchors=(), ch=()):
        super(Detect, self).__init__()
        self.nc = nc
        self.no = nc + 5
        self.nl = len(anchors)
        self.na = len(anchors[0]) // 2
        self.grid = [torch.zeros(1)] * self.nl
        a = torch.tensor(anchors).float().view(self.nl, -1, 2)
        self.register_buffer('anchors', a)
        self.register_buffer('anchor_grid', a.clone().view(self.nl, 1, -1, 1, 1, 2))
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)

    def forward(self, x):
        z = []
        for i in range(self.nl):
            x[i] = self.m[i](x[i])
            bs, _, ny, nx = x[i].shape
            x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()

            if not self.training:
                if self.grid[i].shape[2:4] != x[i].shape[2:4]:
                    self.grid[i] = self._make_grid(nx, ny)
                y = x[i].sigmoid()
                y[..., 0:2] = (y[..., 0:2] * 2. - 0.5 + self.grid[i]) * self.stride[i]  # <-- IPL001: y is sigmoid's saved output
                y[..., 2:4] = (y[..., 2:4] * 2) ** 2 * self.anchor_grid[i]  # <-- IPL001: same saved output
                z.append(y.view(bs, -1, self.no))

        return x if self.training else (torch.cat(z, 1), x)

    @staticmethod
    def _make_grid(nx=20, ny=20):
        yv, xv = torch.meshgrid([torch.arange(ny), torch.arange(nx)], indexing='ij')
        return torch.stack((xv, yv), 2).view((1, 1, ny, nx, 2)).float()


class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()
        self.backbone = nn.ModuleList([nn.Sequential(nn.Conv2d(3, 4, 3, 2, 1), nn.SiLU()),
                                       nn.Sequential(nn.Conv2d(4, 8, 3, 2, 1), nn.SiLU())])
        self.detect = Detect(nc=2, anchors=((10, 13, 16, 30), (30, 61, 62, 45)), ch=(4, 8))
        self.detect.stride = torch.tensor([2., 4.])

    def forward(self, x):
        feats = []
        for m in self.backbone:
            x = m(x)
            feats.append(x)
        return self.detect(feats)


def adapt_single(image, optimizer, model):
    model.eval()
    outputs, train_output = model(image)
    conf = outputs[..., 4]
    loss = -(conf * torch.log(conf + 1e-6)).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss


model = Model()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
inputs_t = torch.rand(1, 3, 16, 16)
tta_loss = adapt_single(inputs_t, optimizer, model)
