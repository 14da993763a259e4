# label: hazard raises
# why: in eval mode the v6.2 Detect head decodes boxes by slice-assigning into y = x[i].sigmoid(); SigmoidBackward saved y, so backpropagating a class score for the grad-CAM heatmap fails
# source: https://github.com/z1069614715/objectdetection_script/issues/1
import torch
import torch.nn as nn

torch.manual_seed(0)


class Detect(nn.Module):
    stride = None
    onnx_dynamic = False
    export = False

    def __init__(self, nc=2, anchors=(), ch=(), inplace=True):
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
                    y[..., 0:2] = (y[..., 0:2] * 2 + self.grid[i]) * self.stride[i]  # <-- IPL001: y is SigmoidBackward's saved output
                    y[..., 2:4] = (y[..., 2:4] * 2) ** 2 * self.anchor_grid[i]  # <-- IPL001: second write to the saved sigmoid output
                else:
                    xy, wh, conf = y.split((2, 2, self.nc + 1), 4)
                    xy = (xy * 2 + self.grid[i]) * self.stride[i]
                    wh = (wh * 2) ** 2 * self.anchor_grid[i]
                    y = torch.cat((xy, wh, conf), 4)
                z.append(y.view(bs, -1, self.no))

        return x if self.training else (torch.cat(z, 1),) if self.export else (torch.cat(z, 1), x)

    def _make_grid(self, nx=20, ny=20, i=0):
        d = self.anchors[i].device
        shape = 1, self.na, ny, nx, 2
        yv, xv = torch.meshgrid(torch.arange(ny, device=d), torch.arange(nx, device=d), indexing='ij')
        grid = torch.stack((xv, yv), 2).expand(shape).float() - 0.5
        anchor_grid = (self.anchors[i] * self.stride[i]).view((1, self.na, 1, 1, 2)).expand(shape)
        return grid, anchor_grid


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.SiLU())
        self.neck = nn.Sequential(nn.Conv2d(8, 8, 3, 2, 1), nn.SiLU())
        self.detect = Detect(nc=2, anchors=((10, 13, 16, 30), (30, 61, 62, 45)), ch=(8, 8))
        self.detect.stride = torch.tensor([2.0, 4.0])

    def forward(self, x):
        p3 = self.backbone(x)
        p4 = self.neck(p3)
        return self.detect([p3, p4])


class ActivationsAndGradients:
    def __init__(self, model, target_layers):
        self.model = model
        self.gradients = []
        self.activations = []
        self.handles = []
        for target_layer in target_layers:
            self.handles.append(target_layer.register_forward_hook(self.save_activation))
            self.handles.append(target_layer.register_forward_hook(self.save_gradient))

    def save_activation(self, module, input, output):
        self.activations.append(output.detach())

    def save_gradient(self, module, input, output):
        def _store_grad(grad):
            self.gradients = [grad.detach()] + self.gradients
        output.register_hook(_store_grad)

    def __call__(self, x):
        self.gradients = []
        self.activations = []
        return self.model(x)


class yolov5_heatmap:
    def __init__(self, model, layer):
        self.model = model.eval()
        self.grads = ActivationsAndGradients(self.model, [layer])

    def post_process(self, result):
        logits_ = result[..., 4:]
        boxes_ = result[..., :4]
        sorted_, indices = torch.sort(logits_[..., 0], descending=True)
        return logits_[0][indices[0]], boxes_[0][indices[0]]

    def __call__(self, img):
        tensor = img.clone()
        result = self.grads(tensor)
        post_result, pre_post_boxes = self.post_process(result[0])
        for i in range(3):
            self.model.zero_grad()
            score = post_result[i, 1:].max()
            score.backward(retain_graph=True)
            gradients = self.grads.gradients[0]
            activations = self.grads.activations[0]
            weights = gradients.mean(dim=(2, 3), keepdim=True)
            saliency_map = (weights * activations).sum(1, keepdim=True).clamp(min=0)
            print("saliency", i, saliency_map.sum().item())


model = Model()
heatmap = yolov5_heatmap(model, model.backbone)
heatmap(torch.rand(1, 3, 16, 16))
