# label: hazard raises
# why: the YOLO Detect head sigmoid()s the raw map and then rewrites its xy/wh slices in place, but SigmoidBackward saved that output, so backpropagating the Grad-CAM score raises.
# source: https://github.com/jacobgil/pytorch-grad-cam/issues/215
import torch
import torch.nn as nn

torch.manual_seed(0)


class Detect(nn.Module):
    def __init__(self, nc=2, anchors=((10, 13, 16, 30, 33, 23),), ch=(8,)):
        super().__init__()
        self.nc = nc
        self.no = nc + 5
        self.nl = len(anchors)
        self.na = len(anchors[0]) // 2
        self.grid = [torch.zeros(1)] * self.nl
        a = torch.tensor(anchors).float().view(self.nl, -1, 2)
        self.register_buffer("anchor_grid", a.clone().view(self.nl, 1, -1, 1, 1, 2))
        self.stride = torch.tensor([2.0])
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)

    @staticmethod
    def _make_grid(nx=20, ny=20):
        yv, xv = torch.meshgrid([torch.arange(ny), torch.arange(nx)], indexing="ij")
        return torch.stack((xv, yv), 2).view((1, 1, ny, nx, 2)).float()

    def forward(self, x):
        z = []
        for i in range(self.nl):
            x[i] = self.m[i](x[i])
            bs, _, ny, nx = x[i].shape
            x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
            if self.grid[i].shape[2:4] != x[i].shape[2:4]:
                self.grid[i] = self._make_grid(nx, ny)
            y = x[i].sigmoid()
            y[..., 0:2] = (y[..., 0:2] * 2.0 - 0.5 + self.grid[i]) * self.stride[i]  # <-- IPL001: overwrites sigmoid output saved for backward
            y[..., 2:4] = (y[..., 2:4] * 2) ** 2 * self.anchor_grid[i]  # <-- IPL001: overwrites sigmoid output saved for backward
            z.append(y.view(bs, -1, self.no))
        return torch.cat(z, 1), x


class TinyYolo(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.SiLU())
        self.detect = Detect()

    def forward(self, img):
        return self.detect([self.backbone(img)])


class ActivationsAndGradients:
    def __init__(self, model, target_layer):
        self.model = model
        self.activations = []
        self.gradients = []
        target_layer.register_forward_hook(self.save_activation)

    def save_activation(self, module, input, output):
        self.activations.append(output.detach())
        output.register_hook(self.save_gradient)

    def save_gradient(self, grad):
        self.gradients = [grad.detach()] + self.gradients

    def __call__(self, x):
        self.gradients = []
        self.activations = []
        return self.model(x)


model = TinyYolo().eval()
cam_hooks = ActivationsAndGradients(model, model.backbone)
img = torch.rand(1, 3, 16, 16)
pred, _ = cam_hooks(img)
score = pred[0, :, 4].max()
model.zero_grad()
score.backward()
weights = cam_hooks.gradients[0].mean(dim=(2, 3), keepdim=True)
cam = torch.relu((weights * cam_hooks.activations[0]).sum(1))
