# label: safe
# why: YOLOLayer decodes boxes on io = p.clone(), so the in-place sigmoid/exp/stride writes never touch p, which the loss still uses
# source: https://github.com/ultralytics/yolov3/blob/master/models.py
import torch
import torch.nn as nn

torch.manual_seed(0)


class YOLOLayer(nn.Module):
    def __init__(self, anchors, nc, stride):
        super(YOLOLayer, self).__init__()
        self.anchors = torch.Tensor(anchors)
        self.stride = stride  # layer stride
        self.na = len(anchors)  # number of anchors (3)
        self.nc = nc  # number of classes (80)
        self.no = nc + 5  # number of outputs (85)
        self.nx, self.ny = 0, 0  # initialize number of x, y gridpoints
        self.anchor_vec = self.anchors / self.stride
        self.anchor_wh = self.anchor_vec.view(1, self.na, 1, 1, 2)

    def create_grids(self, ng=(13, 13), device='cpu'):
        self.nx, self.ny = ng  # x and y grid size
        yv, xv = torch.meshgrid([torch.arange(self.ny, device=device), torch.arange(self.nx, device=device)], indexing='ij')
        self.grid = torch.stack((xv, yv), 2).view((1, 1, self.ny, self.nx, 2)).float()

    def forward(self, p):
        bs, _, ny, nx = p.shape  # bs, 255, 13, 13
        if (self.nx, self.ny) != (nx, ny):
            self.create_grids((nx, ny), p.device)

        # p.view(bs, 255, 13, 13) -- > (bs, 3, 13, 13, 85)  # (bs, anchors, grid, grid, classes + xywh)
        p = p.view(bs, self.na, self.no, self.ny, self.nx).permute(0, 1, 3, 4, 2).contiguous()  # prediction

        if self.training:
            return p
        else:  # inference
            io = p.clone()  # inference output
            io[..., :2] = torch.sigmoid(io[..., :2]) + self.grid  # xy
            io[..., 2:4] = torch.exp(io[..., 2:4]) * self.anchor_wh  # wh yolo method
            io[..., :4] *= self.stride
            torch.sigmoid_(io[..., 4:])
            return io.view(bs, -1, self.no), p  # view [1, 3, 13, 13, 85] as [1, 507, 85]


class Darknet(nn.Module):
    def __init__(self, nc=2):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.LeakyReLU(0.1, inplace=True))
        self.head = nn.Conv2d(8, 3 * (nc + 5), 1)
        self.yolo = YOLOLayer([(10, 13), (16, 30), (33, 23)], nc, stride=2)

    def forward(self, x):
        return self.yolo(self.head(self.backbone(x)))


def compute_loss(p, targets):
    lobj = nn.functional.binary_cross_entropy_with_logits(p[..., 4], targets)
    lbox = p[..., :4].pow(2).mean()
    return lobj + lbox


model = Darknet()
model.eval()
imgs = torch.rand(2, 3, 8, 8)
inf_out, train_out = model(imgs)  # inference and training outputs
targets = (torch.rand(train_out[..., 4].shape) > 0.7).float()
loss = compute_loss(train_out, targets)
loss = loss + inf_out[..., 4:].mean() * 0.1
loss.backward()
