# label: hazard raises
# why: softmax saves its output for backward; clamp_ on the student probabilities bumps its version before loss.backward()
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
T = 4.0
alpha = 0.7
teacher = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 5))
student = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 5))
opt = torch.optim.SGD(student.parameters(), lr=0.05)

x = torch.randn(8, 10)
y = torch.randint(0, 5, (8,))

with torch.no_grad():
    t_prob = F.softmax(teacher(x) / T, dim=1)

s_logits = student(x)
s_prob = F.softmax(s_logits / T, dim=1)
s_prob.clamp_(min=1e-6)  # <-- IPL001
kd = (t_prob * (t_prob.log() - s_prob.log())).sum(dim=1).mean() * T * T
ce = F.cross_entropy(s_logits, y)
loss = alpha * kd + (1 - alpha) * ce

opt.zero_grad()
loss.backward()
opt.step()

student_w = student[0].weight.detach().clone()
