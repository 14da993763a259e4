# label: safe
# why: the in-place smoothing is applied to a .clone() of the softmax output, which is a new tensor with its own storage and version counter.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def smoothed_distill_loss(student_logits, teacher_logits, eps=0.1):
    teacher_p = F.softmax(teacher_logits, dim=-1)
    target = teacher_p.clone()
    target.mul_(1 - eps)
    target.add_(eps / target.shape[-1])
    log_p = F.log_softmax(student_logits, dim=-1)
    return -(target * log_p).sum(-1).mean() + 0.01 * teacher_p.pow(2).sum()


student = nn.Linear(6, 5)
teacher = nn.Linear(6, 5)
x = torch.randn(4, 6)
loss = smoothed_distill_loss(student(x), teacher(x))
loss.backward()
