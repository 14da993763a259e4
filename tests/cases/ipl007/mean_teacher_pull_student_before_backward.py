# label: hazard silent
# why: the student's weights are pulled toward the EMA teacher through p.data.lerp_ after the student's forward but before backward, so the pending graph silently differentiates with the moved weights.
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

student = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
teacher = copy.deepcopy(student)
with torch.no_grad():
    for pt in teacher.parameters():
        pt.add_(0.3 * torch.randn_like(pt))
opt = torch.optim.SGD(student.parameters(), lr=0.1)

x = torch.randn(6, 4)
y = torch.randint(0, 3, (6,))
with torch.no_grad():
    t_probs = F.softmax(teacher(x), dim=-1)
s_logits = student(x)
loss = F.cross_entropy(s_logits, y) + F.kl_div(F.log_softmax(s_logits, -1), t_probs, reduction="batchmean")

opt.zero_grad()
for ps, pt in zip(student.parameters(), teacher.parameters()):
    ps.data.lerp_(pt.data, 0.5)  # <-- IPL007: student weights moved while the graph still holds them
loss.backward()
opt.step()
first_grad = student[0].weight.grad.clone()
