# label: hazard silent
# why: `self.teacher_cache = t.detach()` shares storage with `t`; `t.relu_()` then turns the cached pre-ReLU distillation target into post-ReLU values
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PreReLUDistiller(nn.Module):
    def __init__(self, num_classes=5):
        super().__init__()
        self.teacher = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8))
        self.student = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4))
        self.connector = nn.Conv2d(4, 8, 1)
        self.teacher_fc = nn.Linear(8, num_classes)
        self.student_fc = nn.Linear(4, num_classes)
        self.teacher_cache = None
        for p in list(self.teacher.parameters()) + list(self.teacher_fc.parameters()):
            p.requires_grad_(False)

    def forward(self, x):
        with torch.no_grad():
            t = self.teacher(x)
            self.teacher_cache = t.detach()  # pre-ReLU target (overhaul distillation)
            t.relu_()  # <-- IPL002
            t_logits = self.teacher_fc(t.mean((2, 3)))
        s = self.student(x)
        feat_loss = F.mse_loss(self.connector(s), self.teacher_cache)
        s_logits = self.student_fc(F.relu(s).mean((2, 3)))
        return s_logits, t_logits, feat_loss


model = PreReLUDistiller().train()
images = torch.randn(4, 3, 8, 8)
s_logits, t_logits, feat_loss = model(images)
kd = F.kl_div(s_logits.log_softmax(-1), t_logits.softmax(-1), reduction="batchmean")
loss = kd + feat_loss
loss.backward()
grad_connector = model.connector.weight.grad.clone()
grad_student = model.student[0].weight.grad.clone()
