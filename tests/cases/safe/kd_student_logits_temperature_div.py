# label: safe
# why: `logits /= T` divides a matmul output (mm saves its inputs, not its output) and no other name still refers to the unscaled logits
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PrototypeStudent(nn.Module):
    def __init__(self, in_dim=12, dim=16, num_classes=6):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(in_dim, dim), nn.GELU())
        self.prototypes = nn.Parameter(torch.randn(num_classes, dim) * 0.1)

    def forward(self, x):
        return torch.matmul(self.backbone(x), self.prototypes.t())


student = PrototypeStudent()
teacher = nn.Linear(12, 6)
T, alpha = 4.0, 0.7

x = torch.randn(8, 12)
y = torch.randint(0, 6, (8,))
logits = student(x)
hard_loss = F.cross_entropy(logits, y)
logits /= T
with torch.no_grad():
    t_logits = teacher(x)
    t_logits /= T
kd_loss = F.kl_div(F.log_softmax(logits, dim=-1), F.softmax(t_logits, dim=-1), reduction="batchmean") * T * T
loss = alpha * kd_loss + (1.0 - alpha) * hard_loss
loss.backward()
proto_grad = student.prototypes.grad
backbone_grad = student.backbone[0].weight.grad
