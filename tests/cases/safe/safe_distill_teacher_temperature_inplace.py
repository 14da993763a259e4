# label: safe
# why: the teacher logits are produced under no_grad and divided by the temperature in place; that tensor is fresh and never read in its old form.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
teacher = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 5))
student = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 5))
x = torch.randn(12, 8)
y = torch.randint(0, 5, (12,))
T, alpha = 3.0, 0.7

with torch.no_grad():
    t_logits = teacher(x)
    t_logits /= T
    t_probs = F.softmax(t_logits, dim=-1)
s_logits = student(x)
kd = F.kl_div(F.log_softmax(s_logits / T, dim=-1), t_probs, reduction="batchmean") * T * T
ce = F.cross_entropy(s_logits, y)
loss = alpha * kd + (1 - alpha) * ce
loss.backward()
