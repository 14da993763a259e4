# label: safe
# why: the copy the issue asks for: postprocess takes `boxes = dets['box'].clone()`, so converting it to absolute pixels in place no longer reaches the detector's output dict and the second postprocess call (COCO-json export) sees relative boxes again. The remaining in-place ops (`masks.gt_(0.5)`, ReLU(inplace=True) on conv outputs) touch fresh tensors.
# source: https://github.com/WisconsinAIVision/yolact_edge/issues/195
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Cfg:
    eval_mask_branch = True
    preserve_aspect_ratio = False
    max_size = 64


cfg = Cfg()


class Args:
    top_k = 5
    score_threshold = 0.0
    crop = True
    output_coco_json = True


args = Args()


def sanitize_coordinates(_x1, _x2, img_size: int, padding: int = 0, cast: bool = True):
    """
    Sanitizes the input coordinates so that x1 < x2, x1 != x2, x1 >= 0, and x2 <= image_size.
    Also converts from relative to absolute coordinates and casts the results to long tensors.
    """
    _x1 = _x1 * img_size
    _x2 = _x2 * img_size
    if cast:
        _x1 = _x1.long()
        _x2 = _x2.long()
    x1 = torch.min(_x1, _x2)
    x2 = torch.max(_x1, _x2)
    x1 = torch.clamp(x1 - padding, min=0)
    x2 = torch.clamp(x2 + padding, max=img_size)

    return x1, x2


def crop(masks, boxes, padding: int = 1):
    h, w, n = masks.size()
    x1, x2 = sanitize_coordinates(boxes[:, 0], boxes[:, 2], w, padding, cast=False)
    y1, y2 = sanitize_coordinates(boxes[:, 1], boxes[:, 3], h, padding, cast=False)

    rows = torch.arange(w, device=masks.device, dtype=x1.dtype).view(1, -1, 1).expand(h, w, n)
    cols = torch.arange(h, device=masks.device, dtype=x1.dtype).view(-1, 1, 1).expand(h, w, n)

    masks_left = rows >= x1.view(1, 1, -1)
    masks_right = rows < x2.view(1, 1, -1)
    masks_up = cols >= y1.view(1, 1, -1)
    masks_down = cols < y2.view(1, 1, -1)

    crop_mask = masks_left * masks_right * masks_up * masks_down

    return masks * crop_mask.float()


def postprocess(det_output, w, h, batch_idx=0, interpolation_mode='bilinear',
                crop_masks=True, score_threshold=0):
    dets = det_output[batch_idx]

    if score_threshold > 0:
        keep = dets['score'] > score_threshold
        for k in dets:
            if k != 'proto':
                dets[k] = dets[k][keep]

    b_w, b_h = (w, h)

    # Actually extract everything from dets now
    classes = dets['class']
    boxes = dets['box'].clone()
    scores = dets['score']
    masks = dets['mask']

    if cfg.eval_mask_branch:
        # At this points masks is only the coefficients
        proto_data = dets['proto']
        masks = proto_data @ masks.t()
        masks = torch.sigmoid(masks)

        # Crop masks before upsampling because you know why
        if crop_masks:
            masks = crop(masks, boxes)

        # Permute into the correct output shape [num_dets, proto_h, proto_w]
        masks = masks.permute(2, 0, 1).contiguous()
        masks = F.interpolate(masks.unsqueeze(0), (h, w), mode=interpolation_mode, align_corners=False).squeeze(0)

        # Binarize the masks
        masks.gt_(0.5)

    boxes[:, 0], boxes[:, 2] = sanitize_coordinates(boxes[:, 0], boxes[:, 2], b_w, cast=False)
    boxes[:, 1], boxes[:, 3] = sanitize_coordinates(boxes[:, 1], boxes[:, 3], b_h, cast=False)
    boxes = boxes.long()

    return classes, scores, boxes, masks


class TinyYolact(nn.Module):
    """Backbone + protonet + prediction head (boxes in relative point form)."""

    def __init__(self, num_classes=3, num_protos=4, num_priors=8):
        super().__init__()
        self.num_priors = num_priors
        self.num_classes = num_classes
        self.backbone = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.ReLU(inplace=True),
                                      nn.Conv2d(16, 16, 3, stride=2, padding=1), nn.ReLU(inplace=True))
        self.proto_net = nn.Sequential(nn.Conv2d(16, num_protos, 1), nn.ReLU(inplace=True))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.loc = nn.Linear(16, num_priors * 4)
        self.conf = nn.Linear(16, num_priors * num_classes)
        self.coef = nn.Linear(16, num_priors * num_protos)

    def forward(self, x):
        feat = self.backbone(x)
        proto = self.proto_net(feat).permute(0, 2, 3, 1).contiguous()
        g = self.pool(feat).flatten(1)
        B = x.size(0)
        loc = self.loc(g).view(B, self.num_priors, 4)
        cxcy, wh = torch.sigmoid(loc[..., :2]), 0.1 + 0.4 * torch.sigmoid(loc[..., 2:])
        boxes = torch.cat([cxcy - wh / 2, cxcy + wh / 2], dim=-1).clamp(0, 1)
        conf = self.conf(g).view(B, self.num_priors, self.num_classes)
        coef = torch.tanh(self.coef(g).view(B, self.num_priors, -1))
        return boxes, conf, coef, proto


def detect(boxes, conf, coef, proto, top_k=5):
    """Reduced Detect: keep the top-k priors by score (NMS omitted)."""
    out = []
    scores_all = conf.softmax(-1)
    for b in range(boxes.size(0)):
        scores, classes = scores_all[b, :, 1:].max(-1)
        idx = scores.argsort(descending=True)[:top_k]
        out.append({'box': boxes[b, idx], 'class': classes[idx], 'score': scores[idx],
                    'mask': coef[b, idx], 'proto': proto[b]})
    return out


def prep_display(dets_out, img, h, w, undo_transform=False):
    img_gpu = img / 255.0
    h, w, _ = img.shape
    t = postprocess(dets_out, w, h, crop_masks=args.crop, score_threshold=args.score_threshold)
    masks = t[3][:args.top_k]
    classes, scores, boxes = [x[:args.top_k] for x in t[:3]]
    # draw the masks on the image
    overlay = img_gpu.mean(-1, keepdim=True) * (1 - masks.amax(0)[..., None] * 0.45)
    return (overlay * 255).byte(), boxes


def evalimage(net, frame, detections):
    batch = frame.permute(2, 0, 1).unsqueeze(0) / 255.0
    with torch.no_grad():
        preds = detect(*net(batch), top_k=args.top_k)

    img_numpy, drawn_boxes = prep_display(preds, frame, None, None, undo_transform=False)

    if args.output_coco_json:
        _, _, h, w = batch.size()
        classes, scores, boxes, masks = \
            postprocess(preds, w, h, crop_masks=args.crop, score_threshold=args.score_threshold)
        for i in range(masks.shape[0]):
            if (boxes[i, 3] - boxes[i, 1]) * (boxes[i, 2] - boxes[i, 0]) > 0:
                detections.append(boxes[i].float())
    return img_numpy, drawn_boxes


def main():
    net = TinyYolact()
    optimizer = torch.optim.SGD(net.parameters(), lr=1e-3, momentum=0.9)

    # one training step (box + class + mask-coefficient losses)
    images = torch.rand(2, 3, 64, 64)
    boxes, conf, coef, proto = net(images)
    gt_boxes = torch.tensor([[0.2, 0.2, 0.6, 0.7], [0.1, 0.3, 0.5, 0.9]])[:, None].expand_as(boxes)
    gt_cls = torch.randint(1, 3, (2, 8))
    loss = F.smooth_l1_loss(boxes, gt_boxes) + F.cross_entropy(conf.flatten(0, 1), gt_cls.flatten()) \
        + coef.pow(2).mean() + proto.mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

    # evaluation with COCO-json export
    net.eval()
    frame = torch.rand(64, 64, 3) * 255
    detections = []
    img_numpy, drawn_boxes = evalimage(net, frame, detections)
    json_boxes = torch.stack(detections) if detections else torch.zeros(0, 4)
    return loss.detach(), drawn_boxes.float(), json_boxes


loss, drawn_boxes, json_boxes = main()
