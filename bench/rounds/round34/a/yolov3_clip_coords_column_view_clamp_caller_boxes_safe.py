# label: safe no-twin
# why: After PR #961 clip_coords clamps `boxes[:, 0]`...`boxes[:, 3]` (basic-index views) in place, and scale_coords shifts/rescales `coords` in place too; the prediction tensor belongs to the caller, which wants it rescaled and clipped in place and keeps using the returned alias, and nothing saved for backward is touched (NMS output, no grad). no-twin: an out-of-place `clamp` on a view would simply drop the clipping the caller asked for.
# source: https://github.com/ultralytics/yolov3/pull/961
import torch
import torch.nn as nn


def xywh2xyxy(x):
    # Convert bounding box format from [x, y, w, h] to [x1, y1, x2, y2]
    y = torch.zeros_like(x)
    y[:, 0] = x[:, 0] - x[:, 2] / 2  # top left x
    y[:, 1] = x[:, 1] - x[:, 3] / 2  # top left y
    y[:, 2] = x[:, 0] + x[:, 2] / 2  # bottom right x
    y[:, 3] = x[:, 1] + x[:, 3] / 2  # bottom right y
    return y


def box_iou(box1, box2):
    def box_area(box):
        return (box[2] - box[0]) * (box[3] - box[1])

    area1 = box_area(box1.t())
    area2 = box_area(box2.t())
    inter = (torch.min(box1[:, None, 2:], box2[:, 2:]) - torch.max(box1[:, None, :2], box2[:, :2])).clamp(0).prod(2)
    return inter / (area1[:, None] + area2 - inter)


def non_max_suppression(prediction, conf_thres=0.1, iou_thres=0.6):
    """Greedy per-image NMS on (cx, cy, w, h, obj, cls...) rows; returns (n, 6) [xyxy, conf, cls]."""
    output = [None] * prediction.shape[0]
    for xi, x in enumerate(prediction):
        x = x[x[:, 4] > conf_thres]
        if not x.shape[0]:
            continue
        x[:, 5:] *= x[:, 4:5]  # conf = obj_conf * cls_conf
        box = xywh2xyxy(x[:, :4])
        conf, j = x[:, 5:].max(1, keepdim=True)
        x = torch.cat((box, conf, j.float()), 1)[conf.view(-1) > conf_thres]
        order = x[:, 4].argsort(descending=True)
        x = x[order]
        keep = []
        while x.shape[0]:
            keep.append(x[0])
            if x.shape[0] == 1:
                break
            iou = box_iou(x[:1, :4], x[1:, :4])[0]
            x = x[1:][iou < iou_thres]
        output[xi] = torch.stack(keep)
    return output


def scale_coords(img1_shape, coords, img0_shape, ratio_pad=None):
    # Rescale coords (xyxy) from img1_shape to img0_shape
    if ratio_pad is None:  # calculate from img0_shape
        gain = max(img1_shape) / max(img0_shape)  # gain  = old / new
        pad = (img1_shape[1] - img0_shape[1] * gain) / 2, (img1_shape[0] - img0_shape[0] * gain) / 2  # wh padding
    else:
        gain = ratio_pad[0][0]
        pad = ratio_pad[1]

    coords[:, [0, 2]] -= pad[0]  # x padding
    coords[:, [1, 3]] -= pad[1]  # y padding
    coords[:, :4] /= gain
    clip_coords(coords, img0_shape)
    return coords


def clip_coords(boxes, img_shape):
    # Clip bounding xyxy bounding boxes to image shape (height, width)
    boxes[:, 0].clamp_(0, img_shape[1])  # x1
    boxes[:, 1].clamp_(0, img_shape[0])  # y1
    boxes[:, 2].clamp_(0, img_shape[1])  # x2
    boxes[:, 3].clamp_(0, img_shape[0])  # y2


class TinyYOLOHead(nn.Module):
    def __init__(self, nc=3, na=3):
        super().__init__()
        self.na, self.no = na, nc + 5
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.LeakyReLU(0.1), nn.Conv2d(8, 16, 3, 2, 1))
        self.head = nn.Conv2d(16, na * self.no, 1)
        self.register_buffer('anchors', torch.tensor([[10., 13.], [16., 30.], [33., 23.]]))

    def forward(self, x):
        p = self.head(self.backbone(x))
        bs, _, ny, nx = p.shape
        p = p.view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
        yv, xv = torch.meshgrid(torch.arange(ny), torch.arange(nx), indexing='ij')
        grid = torch.stack((xv, yv), 2).view(1, 1, ny, nx, 2).float()
        stride = x.shape[-1] / nx
        io = p.sigmoid()
        xy = (io[..., :2] + grid) * stride
        wh = torch.exp(p[..., 2:4]).clamp(max=1e3) * self.anchors.view(1, self.na, 1, 1, 2)
        io = torch.cat((xy, wh, io[..., 4:]), -1)
        return io.view(bs, -1, self.no), p


def main():
    torch.manual_seed(0)
    model = TinyYOLOHead()
    img = torch.rand(2, 3, 64, 64)  # letterboxed 64x64 inputs
    im0_shape = (48, 64)  # original frame (h, w)
    with torch.no_grad():
        inf_out, train_out = model(img)
        pred = non_max_suppression(inf_out, conf_thres=0.05, iou_thres=0.5)
    detections = []
    for det in pred:
        if det is None:
            continue
        det[:, :4] = scale_coords(img.shape[2:], det[:, :4], im0_shape).round()
        detections.append(det)
    dets = torch.cat(detections)
    # a training step on the same head still works
    _, p = model(img)
    loss = p[..., 4].sigmoid().mean()
    loss.backward()
    return dets, loss, model.head.weight.grad


dets, loss, head_grad = main()
print(dets.shape, float(loss))
