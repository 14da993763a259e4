# label: hazard raises
# why: GradCAM registers a full backward hook on a YOLOv5 activation module, which wraps the module's input in BackwardHookFunction views, and the hooked SiLU(inplace=True) then writes into that custom-Function view in place
# source: https://github.com/pooya-mohammadi/yolov5-gradcam/issues/7
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def autopad(k, p=None):
    return k // 2 if p is None else p


class Conv(nn.Module):
    # Standard convolution
    def __init__(self, c1, c2, k=1, s=1, p=None, act=True):
        super().__init__()
        self.conv = nn.Conv2d(c1, c2, k, s, autopad(k, p), bias=False)
        self.bn = nn.BatchNorm2d(c2)
        self.act = nn.SiLU(inplace=True) if act is True else nn.Identity()  # <-- IPL001: in-place activation on the hooked module's input view

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class C3(nn.Module):
    def __init__(self, c1, c2, n=1):
        super().__init__()
        c_ = c2 // 2
        self.cv1 = Conv(c1, c_, 1, 1)
        self.cv2 = Conv(c1, c_, 1, 1)
        self.cv3 = Conv(2 * c_, c2, 1)
        self.m = nn.Sequential(*(Conv(c_, c_, 3, 1) for _ in range(n)))

    def forward(self, x):
        return self.cv3(torch.cat((self.m(self.cv1(x)), self.cv2(x)), dim=1))


class TinyYOLO(nn.Module):
    def __init__(self, nc=3, na=2):
        super().__init__()
        self.model = nn.Sequential(Conv(3, 8, 3, 2), C3(8, 8), Conv(8, 16, 3, 2), C3(16, 16))
        self.detect = nn.Conv2d(16, na * (5 + nc), 1)
        self.na, self.no = na, 5 + nc

    def forward(self, x):
        p = self.detect(self.model(x))
        bs, _, ny, nx = p.shape
        p = p.view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
        y = p.sigmoid()
        return y.view(bs, -1, self.no)


def find_yolo_layer(model, layer_name):
    hierarchy = layer_name.split('_')
    target_layer = model._modules[hierarchy[0]]
    for h in hierarchy[1:]:
        target_layer = target_layer._modules[h]
    return target_layer


class YOLOV5GradCAM:
    def __init__(self, model, layer_name):
        self.model = model
        self.gradients = dict()
        self.activations = dict()

        def backward_hook(module, grad_input, grad_output):
            self.gradients['value'] = grad_output[0]

        def forward_hook(module, input, output):
            self.activations['value'] = output

        target_layer = find_yolo_layer(self.model, layer_name)
        target_layer.register_forward_hook(forward_hook)
        target_layer.register_full_backward_hook(backward_hook)

    def forward(self, input_img, class_idx=0):
        b, c, h, w = input_img.size()
        preds = self.model(input_img)
        score = (preds[..., 4] * preds[..., 5 + class_idx]).max()
        self.model.zero_grad()
        score.backward(retain_graph=True)
        gradients = self.gradients['value']
        activations = self.activations['value']
        weights = F.adaptive_avg_pool2d(gradients, 1)
        saliency_map = F.relu((weights * activations).sum(1, keepdim=True))
        saliency_map = F.interpolate(saliency_map, size=(h, w), mode='bilinear', align_corners=False)
        saliency_min, saliency_max = saliency_map.min(), saliency_map.max()
        return (saliency_map - saliency_min).div(saliency_max - saliency_min + 1e-7)


model = TinyYOLO().eval()
saliency_method = YOLOV5GradCAM(model=model, layer_name='model_3_cv3_act')
img = torch.rand(1, 3, 32, 32)
mask = saliency_method.forward(img)
