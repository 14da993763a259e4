# label: safe
# why: the EMA teacher's parameters are updated in place under torch.no_grad() after the step's losses were computed and backpropagated
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

student = nn.Sequential(nn.Linear(6, 12), nn.GELU(), nn.Linear(12, 4))
teacher = copy.deepcopy(student)
for p in teacher.parameters():
    p.requires_grad_(False)

momentum = 0.99
x = torch.randn(5, 6)
x_aug = x + 0.1 * torch.randn_like(x)

s_logits = student(x_aug)
with torch.no_grad():
    t_probs = F.softmax(teacher(x) / 0.5, dim=-1)
loss = -(t_probs * F.log_softmax(s_logits / 0.1, dim=-1)).sum(-1).mean()
loss.backward()
student_grad = student[0].weight.grad

with torch.no_grad():
    for tp, sp in zip(teacher.parameters(), student.parameters()):
        tp.mul_(momentum).add_(sp.detach(), alpha=1 - momentum)
