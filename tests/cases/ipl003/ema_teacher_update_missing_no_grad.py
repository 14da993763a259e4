# label: hazard raises
# why: the deep-copied teacher's parameters still require grad; the EMA update mul_/add_ on them outside no_grad raises
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
student = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))
teacher = copy.deepcopy(student)
opt = torch.optim.SGD(student.parameters(), lr=0.1)
momentum = 0.99

x = torch.randn(8, 6)
y = torch.randint(0, 3, (8,))
x_noisy = x + 0.1 * torch.randn_like(x)

s_logits = student(x)
with torch.no_grad():
    t_prob = F.softmax(teacher(x_noisy), dim=1)
consistency = F.mse_loss(F.softmax(s_logits, dim=1), t_prob)
loss = F.cross_entropy(s_logits, y) + consistency

opt.zero_grad()
loss.backward()
opt.step()

for t_p, s_p in zip(teacher.parameters(), student.parameters()):
    t_p.mul_(momentum).add_(s_p.detach(), alpha=1 - momentum)  # <-- IPL003

student_w = student[0].weight.detach().clone()
