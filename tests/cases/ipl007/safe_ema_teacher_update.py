# label: safe no-twin
# why: mean-teacher EMA: teacher parameters are updated in place under no_grad after the student's backward/step
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

student = nn.Sequential(nn.Linear(4, 6), nn.ReLU(inplace=True), nn.Linear(6, 3))
teacher = copy.deepcopy(student)
for p in teacher.parameters():
    p.requires_grad_(False)
opt = torch.optim.SGD(student.parameters(), lr=0.1)
decay = 0.99

x = torch.randn(8, 4)
y = torch.randint(0, 3, (8,))
for _ in range(2):
    with torch.no_grad():
        soft = teacher(x).softmax(-1)
    logits = student(x)
    loss = F.cross_entropy(logits, y) + F.kl_div(logits.log_softmax(-1), soft, reduction="batchmean")
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        for t_p, s_p in zip(teacher.parameters(), student.parameters()):
            t_p.data.mul_(decay).add_(s_p.data, alpha=1 - decay)
