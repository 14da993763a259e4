# label: hazard silent
# why: `wh = boxes[:, 2:]` is a view; converting to xyxy in place overwrites it with x2y2, so the area weights read later are wrong
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

boxes = regressor(feats)  # predicted (x, y, w, h)
xy = boxes[:, :2]
wh = boxes[:, 2:]
boxes[:, 2:] = xy + wh  # <-- IPL002
area = wh[:, 0] * wh[:, 1]  # intended: width * height
weights = area.abs().clamp(min=1e-3)
l1 = (boxes - gt_xyxy).abs().sum(-1)
loss = (l1 / weights.sqrt()).mean()
loss.backward()
pred_area = area.detach()
grad_first = regressor[0].weight.grad.clone()
grad_last = regressor[2].weight.grad.clone()
