# label: safe no-twin
# why: mean-teacher EMA update writes through .data to teacher weights that are never differentiated (teacher runs under no_grad), after the student step.
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

student = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))
teacher = copy.deepcopy(student)
for p in teacher.parameters():
    p.requires_grad = False
optimizer = torch.optim.SGD(student.parameters(), lr=0.1)
momentum = 0.9

unlabeled = torch.randn(32, 6)
for step in range(4):
    batch = unlabeled[step * 8:(step + 1) * 8]
    with torch.no_grad():
        target = F.softmax(teacher(batch + 0.05 * torch.randn_like(batch)), dim=1)
    consistency = F.mse_loss(F.softmax(student(batch), dim=1), target)
    optimizer.zero_grad()
    consistency.backward()
    optimizer.step()
    for t_param, s_param in zip(teacher.parameters(), student.parameters()):
        t_param.data.mul_(momentum)
        t_param.data.add_((1 - momentum) * s_param.data)
