# label: hazard silent
# why: soften() divides the caller's logits in place, so the hard-label cross-entropy afterwards uses temperature-scaled logits.
import torch
import torch.nn.functional as F
from torch import nn

torch.manual_seed(0)


def soften(logits, temperature):
    logits /= temperature  # <-- IPL004: caller reuses logits for the hard loss
    return F.log_softmax(logits, dim=-1)


teacher = nn.Linear(10, 5)
student = nn.Linear(10, 5)
x = torch.randn(16, 10)
y = torch.randint(0, 5, (16,))
T = 4.0

with torch.no_grad():
    teacher_probs = F.softmax(teacher(x) / T, dim=-1)

student_logits = student(x)
soft_student = soften(student_logits, T)
kd_loss = F.kl_div(soft_student, teacher_probs, reduction="batchmean") * T * T
hard_loss = F.cross_entropy(student_logits, y)
loss = 0.7 * kd_loss + 0.3 * hard_loss
loss.backward()
