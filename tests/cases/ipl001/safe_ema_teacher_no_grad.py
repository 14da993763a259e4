# label: safe no-twin
# why: the EMA teacher is updated in place under no_grad after the student's backward, and the teacher's forward ran under no_grad, so no graph needs those tensors.
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

student = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
teacher = copy.deepcopy(student)
for p in teacher.parameters():
    p.requires_grad_(False)
opt = torch.optim.SGD(student.parameters(), lr=0.1)
momentum = 0.9

for step in range(3):
    x = torch.randn(5, 4)
    with torch.no_grad():
        t_probs = F.softmax(teacher(x), dim=-1)
        t_probs.clamp_(min=1e-4)
    s_logp = F.log_softmax(student(x), dim=-1)
    loss = F.kl_div(s_logp, t_probs, reduction="batchmean")
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        for pt, ps in zip(teacher.parameters(), student.parameters()):
            pt.mul_(momentum).add_(ps, alpha=1 - momentum)
