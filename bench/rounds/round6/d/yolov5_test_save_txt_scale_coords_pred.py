# label: hazard silent
# why: with --save-txt, pred[:, :4] is rescaled to the original image in place (scale_coords also writes through the pred[:, :4] view), so the IoU stats and the plotted `output` list see native-space boxes instead of letterboxed ones
# source: https://github.com/ultralytics/yolov5/issues/760 (fix: https://github.com/ultralytics/yolov5/pull/763, commit da35727c; same bug: https://github.com/WongKinYiu/ScaledYOLOv4/issues/326)
import torch

torch.manual_seed(0)


def xyxy2xywh(x):
    # Convert nx4 boxes from [x1, y1, x2, y2] to [x, y, w, h] where xy1=top-left, xy2=bottom-right
    y = torch.zeros_like(x)
    y[:, 0] = (x[:, 0] + x[:, 2]) / 2  # x center
    y[:, 1] = (x[:, 1] + x[:, 3]) / 2  # y center
    y[:, 2] = x[:, 2] - x[:, 0]  # width
    y[:, 3] = x[:, 3] - x[:, 1]  # height
    return y


def xywh2xyxy(x):
    # Convert nx4 boxes from [x, y, w, h] to [x1, y1, x2, y2] where xy1=top-left, xy2=bottom-right
    y = torch.zeros_like(x)
    y[:, 0] = x[:, 0] - x[:, 2] / 2  # top left x
    y[:, 1] = x[:, 1] - x[:, 3] / 2  # top left y
    y[:, 2] = x[:, 0] + x[:, 2] / 2  # bottom right x
    y[:, 3] = x[:, 1] + x[:, 3] / 2  # bottom right y
    return y


def clip_coords(boxes, img_shape):
    # Clip bounding xyxy bounding boxes to image shape (height, width)
    boxes[:, 0].clamp_(0, img_shape[1])  # x1
    boxes[:, 1].clamp_(0, img_shape[0])  # y1
    boxes[:, 2].clamp_(0, img_shape[1])  # x2
    boxes[:, 3].clamp_(0, img_shape[0])  # y2


def scale_coords(img1_shape, coords, img0_shape, ratio_pad=None):
    # Rescale coords (xyxy) from img1_shape to img0_shape
    if ratio_pad is None:  # calculate from img0_shape
        gain = min(img1_shape[0] / img0_shape[0], img1_shape[1] / img0_shape[1])  # gain  = old / new
        pad = (img1_shape[1] - img0_shape[1] * gain) / 2, (img1_shape[0] - img0_shape[0] * gain) / 2  # wh padding
    else:
        gain = ratio_pad[0][0]
        pad = ratio_pad[1]

    coords[:, [0, 2]] -= pad[0]  # <-- IPL004: writes into the caller's pred[:, :4] view
    coords[:, [1, 3]] -= pad[1]  # <-- IPL004: writes into the caller's pred[:, :4] view
    coords[:, :4] /= gain  # <-- IPL004: writes into the caller's pred[:, :4] view
    clip_coords(coords, img0_shape)
    return coords


def box_iou(box1, box2):
    def box_area(box):
        return (box[2] - box[0]) * (box[3] - box[1])

    area1 = box_area(box1.t())
    area2 = box_area(box2.t())
    inter = (torch.min(box1[:, None, 2:], box2[:, 2:]) - torch.max(box1[:, None, :2], box2[:, :2])).clamp(0).prod(2)
    return inter / (area1[:, None] + area2 - inter)


def output_to_target(output, width, height):
    # Convert model output to target format [batch_id, class_id, x, y, w, h, conf]
    targets = []
    for i, o in enumerate(output):
        if o is not None:
            for pred in o:
                box = pred[:4]
                w = (box[2] - box[0]) / width
                h = (box[3] - box[1]) / height
                x = box[0] / width + w / 2
                y = box[1] / height + h / 2
                conf = pred[4]
                cls = int(pred[5])
                targets.append([i, cls, x, y, w, h, conf])
    return torch.tensor(targets)


# one letterboxed 64x64 batch of two images whose originals were 48x64 (pad 8 px top and bottom)
img = torch.zeros(2, 3, 64, 64)
nb, _, height, width = img.shape
whwh = torch.Tensor([width, height, width, height])
shapes = [((48, 64), ((1.0, 1.0), (0.0, 8.0))), ((48, 64), ((1.0, 1.0), (0.0, 8.0)))]
targets = torch.tensor([[0, 0, 0.30, 0.40, 0.20, 0.20],
                        [0, 1, 0.70, 0.60, 0.25, 0.30],
                        [1, 0, 0.50, 0.50, 0.30, 0.20]])
# NMS output per image: x1, y1, x2, y2, conf, cls in letterboxed pixels
output = [torch.tensor([[13.0, 19.5, 25.5, 32.0, 0.90, 0.0],
                        [37.0, 29.0, 52.0, 48.0, 0.80, 1.0]]),
          torch.tensor([[23.0, 25.5, 41.5, 38.5, 0.70, 0.0]])]
save_txt = True
iouv = torch.linspace(0.5, 0.95, 10)
niou = iouv.numel()

seen = 0
stats, txt_rows = [], []
for si, pred in enumerate(output):
    labels = targets[targets[:, 0] == si, 1:]
    nl = len(labels)
    tcls = labels[:, 0].tolist() if nl else []
    seen += 1

    # Append to text file
    if save_txt:
        gn = torch.tensor(shapes[si][0])[[1, 0, 1, 0]]  # normalization gain whwh
        pred[:, :4] = scale_coords(img[si].shape[1:], pred[:, :4], shapes[si][0], shapes[si][1])  # to original  # <-- IPL002: pred (and output[si]) are read again as letterboxed boxes below
        for *xyxy, conf, cls in pred:
            xywh = (xyxy2xywh(torch.tensor(xyxy).view(1, 4)) / gn).view(-1).tolist()  # normalized xywh
            txt_rows.append([float(cls), *xywh])

    # Clip boxes to image bounds
    clip_coords(pred, (height, width))

    # Assign all predictions as incorrect
    correct = torch.zeros(pred.shape[0], niou, dtype=torch.bool)
    if nl:
        detected = []  # target indices
        tcls_tensor = labels[:, 0]

        # target boxes
        tbox = xywh2xyxy(labels[:, 1:5]) * whwh

        # Per target class
        for cls in torch.unique(tcls_tensor):
            ti = (cls == tcls_tensor).nonzero(as_tuple=False).view(-1)  # prediction indices
            pi = (cls == pred[:, 5]).nonzero(as_tuple=False).view(-1)  # target indices

            # Search for detections
            if pi.shape[0]:
                # Prediction to target ious
                ious, i = box_iou(pred[pi, :4], tbox[ti]).max(1)  # best ious, indices

                # Append detections
                for j in (ious > iouv[0]).nonzero(as_tuple=False):
                    d = ti[i[j]]  # detected target
                    if d not in detected:
                        detected.append(d)
                        correct[pi[j]] = ious[j] > iouv  # iou_thres is 1xn
                        if len(detected) == nl:  # all targets already located in image
                            break

    # Append statistics (correct, conf, pcls, tcls)
    stats.append((correct, pred[:, 4], pred[:, 5], tcls))

# Plot images
plot_targets = output_to_target(output, width, height)
correct_all = torch.cat([s[0] for s in stats]).float()
saved_txt = torch.tensor(txt_rows)
