# label: safe no-twin
# why: the mean-teacher EMA update writes ema_param.data in place after the student's backward and step; the teacher is only run under no_grad, so no graph ever sees the write.
# source: https://github.com/Vegeta2020/SE-SSD/issues/89
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)


def update_ema_variables(model, ema_model, global_step):
    alpha = min(1 - 1 / (global_step + 1), 0.999)
    for ema_param, param in zip(ema_model.parameters(), model.parameters()):
        ema_param.data.mul_(alpha).add_(param.data, alpha=1 - alpha)


class TinyDetector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(inplace=True))
        self.cls_head = nn.Conv2d(8, 2, 1)
        self.box_head = nn.Conv2d(8, 7, 1)

    def forward(self, x):
        feat = self.backbone(x)
        return {"cls_preds": self.cls_head(feat), "box_preds": self.box_head(feat)}


model = TinyDetector()
ema_model = copy.deepcopy(model)
for p in ema_model.parameters():
    p.requires_grad_(False)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

losses = []
for global_step in range(3):
    x = torch.randn(2, 3, 6, 6)
    with torch.no_grad():
        teacher = ema_model(x)
    student = model(x + 0.01 * torch.randn_like(x))
    consistency = F.mse_loss(student["box_preds"], teacher["box_preds"]) + F.mse_loss(
        student["cls_preds"].softmax(1), teacher["cls_preds"].softmax(1))
    optimizer.zero_grad()
    consistency.backward()
    optimizer.step()
    update_ema_variables(model, ema_model, global_step)
    losses.append(consistency.detach())

final_losses = torch.stack(losses)
