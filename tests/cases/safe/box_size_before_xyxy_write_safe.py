# label: safe
# why: every read of the xywh views (centers, sizes, scale) happens before the in-place xyxy writes into boxes; the views are not read afterwards
import torch
import torch.nn as nn

torch.manual_seed(0)

regressor = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
feats = torch.randn(6, 16)
gt_xyxy = torch.tensor(
    [
        [0.1, 0.1, 0.5, 0.6],
        [0.2, 0.3, 0.9, 0.8],
        [0.0, 0.0, 0.3, 0.3],
        [0.4, 0.2, 0.7, 0.9],
        [0.5, 0.5, 0.6, 0.9],
        [0.3, 0.1, 0.8, 0.4],
    ]
)


def box_loss(boxes, gt):
    """boxes: (cx, cy, w, h) predictions, converted to xyxy in place."""
    ctr = boxes[:, :2]
    wh = boxes[:, 2:]
    scale = wh.sum(-1).abs().clamp(min=1e-3).detach()  # size-aware weight
    x1y1 = ctr - 0.5 * wh
    x2y2 = ctr + 0.5 * wh
    boxes[:, :2] = x1y1
    boxes[:, 2:] = x2y2
    l1 = (boxes - gt).abs().sum(-1)
    return (l1 / scale.sqrt()).mean(), boxes


loss, pred_xyxy = box_loss(regressor(feats), gt_xyxy)
loss.backward()
pred_xyxy = pred_xyxy.detach()
grad_first = regressor[0].weight.grad.clone()
grad_last = regressor[2].weight.grad.clone()
