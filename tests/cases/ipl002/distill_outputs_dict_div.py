# label: hazard silent
# why: the outputs dict keeps a reference to logits, so dividing by the temperature in place also changes the logits used for the hard-label cross entropy.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

student = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 4))
teacher = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 4))
T = 4.0

x = torch.randn(6, 10)
y = torch.randint(0, 4, (6,))

with torch.no_grad():
    t_logits = teacher(x) / T

logits = student(x)
outputs = {"logits": logits}
logits.div_(T)  # <-- IPL002: outputs["logits"] is the same tensor
kd = F.kl_div(F.log_softmax(logits, -1), F.softmax(t_logits, -1), reduction="batchmean") * T * T
ce = F.cross_entropy(outputs["logits"], y)
loss = 0.5 * kd + 0.5 * ce
loss.backward()
