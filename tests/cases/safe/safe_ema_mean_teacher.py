# label: safe no-twin
# why: the mean-teacher EMA update writes the teacher's weights in place under no_grad after the student's step, and the teacher's forward runs under no_grad so no graph saved its weights.
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
student = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))
teacher = copy.deepcopy(student)
for p in teacher.parameters():
    p.requires_grad_(False)
opt = torch.optim.SGD(student.parameters(), lr=0.1)
decay = 0.9
x = torch.randn(10, 6)
y = torch.randint(0, 3, (10,))

for it in range(3):
    noisy = x + 0.1 * torch.randn_like(x)
    s_logits = student(noisy)
    with torch.no_grad():
        t_probs = F.softmax(teacher(x + 0.1 * torch.randn_like(x)), -1)
    loss = F.cross_entropy(s_logits, y) + F.mse_loss(F.softmax(s_logits, -1), t_probs)
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        for t_p, s_p in zip(teacher.parameters(), student.parameters()):
            t_p.mul_(decay).add_(s_p, alpha=1 - decay)
