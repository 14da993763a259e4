# label: safe
# why: the EMA shadow weights are detached clones updated in place under no_grad after opt.step(); the student graph is untouched
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call

torch.manual_seed(0)
student = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))
opt = torch.optim.SGD(student.parameters(), lr=0.1)
decay = 0.9
ema = {name: p.detach().clone() for name, p in student.named_parameters()}

for step in range(3):
    x = torch.randn(8, 6)
    y = torch.randint(0, 3, (8,))
    logits = student(x)
    with torch.no_grad():
        t_prob = F.softmax(functional_call(student, ema, (x,)), dim=1)
    loss = F.cross_entropy(logits, y) + F.kl_div(
        F.log_softmax(logits, dim=1), t_prob, reduction="batchmean")
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        for name, p in student.named_parameters():
            ema[name].lerp_(p, 1 - decay)

ema_w = ema["0.weight"]
student_w = student[0].weight.detach().clone()
last_loss = loss.detach()
