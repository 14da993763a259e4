# label: hazard raises no-twin
# why: iterating the prediction batch unbinds it into views of a multi-output op, and non_max_suppression scales the objectness column of such a view in place while the batch still requires grad.
# source: https://github.com/ultralytics/yolov3/issues/1805
import torch
import torch.nn as nn

torch.manual_seed(0)


def xywh2xyxy(x):
    y = torch.zeros_like(x)
    y[:, 0] = x[:, 0] - x[:, 2] / 2
    y[:, 1] = x[:, 1] - x[:, 3] / 2
    y[:, 2] = x[:, 0] + x[:, 2] / 2
    y[:, 3] = x[:, 1] + x[:, 3] / 2
    return y


def non_max_suppression(prediction, conf_thres=0.1, nms_thres=0.5):
    min_wh, max_wh = 2, 10000
    output = [None] * len(prediction)
    for image_i, pred in enumerate(prediction):  # image index , image inference
        class_conf, class_pred = pred[:, 5:].max(1)
        pred[:, 4] *= class_conf  # <-- IPL001: pred is an unbind view of a tensor that requires grad

        i = (pred[:, 4] > conf_thres) & (pred[:, 2:4] > min_wh).all(1) & (pred[:, 2:4] < max_wh).all(1) & torch.isfinite(pred).all(1)
        pred = pred[i]
        if len(pred) == 0:
            continue
        class_conf = class_conf[i]
        class_pred = class_pred[i].unsqueeze(1).float()
        boxes = xywh2xyxy(pred[:, :4])
        output[image_i] = torch.cat((boxes, pred[:, 4:5], class_conf.unsqueeze(1), class_pred), 1)
    return output


class YOLOLayer(nn.Module):
    def __init__(self, nc=3, na=2):
        super().__init__()
        self.no = nc + 5
        self.na = na
        self.conv = nn.Conv2d(3, na * self.no, 1)

    def forward(self, img):
        bs, _, ny, nx = img.shape
        p = self.conv(img).view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2)
        io = p.sigmoid()
        io = io * torch.tensor([64.0, 64.0, 64.0, 64.0, 1.0, 1.0, 1.0, 1.0])
        return io.reshape(bs, -1, self.no)


model = YOLOLayer()
for p in model.parameters():
    p.requires_grad_(False)
adv_patch = torch.full((2, 3, 4, 4), 0.5, requires_grad=True)
prediction = model(adv_patch)
detections = non_max_suppression(prediction)
obj_loss = sum(d[:, 4].sum() for d in detections if d is not None)
obj_loss.backward()
