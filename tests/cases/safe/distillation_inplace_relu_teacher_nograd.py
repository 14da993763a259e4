# label: safe
# why: ReLU(inplace=True) follows a Linear (addmm does not save its output) and the teacher logits are divided in place under no_grad
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
T = 3.0
alpha = 0.5
teacher = nn.Sequential(nn.Linear(10, 32), nn.ReLU(inplace=True), nn.Linear(32, 5))
student = nn.Sequential(nn.Linear(10, 16), nn.ReLU(inplace=True), nn.Linear(16, 5))
opt = torch.optim.SGD(student.parameters(), lr=0.05, momentum=0.9)

for step in range(2):
    x = torch.randn(8, 10)
    y = torch.randint(0, 5, (8,))
    with torch.no_grad():
        t_logits = teacher(x)
        t_logits /= T
        t_prob = F.softmax(t_logits, dim=1)
    s_logits = student(x)
    kd = F.kl_div(F.log_softmax(s_logits / T, dim=1), t_prob, reduction="batchmean") * T * T
    loss = alpha * kd + (1 - alpha) * F.cross_entropy(s_logits, y)
    opt.zero_grad()
    loss.backward()
    opt.step()

student_w = student[0].weight.detach().clone()
last_loss = loss.detach()
