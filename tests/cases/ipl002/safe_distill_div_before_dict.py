# label: safe
# why: the temperature is applied in place before logits is stored anywhere, and the soft logits are a separate out-of-place tensor, so every read sees the value it wants.
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
    t_logits = teacher(x)
    t_logits.div_(T)

logits = student(x)
soft = logits / T
outputs = {"logits": logits, "soft": soft}
kd = F.kl_div(F.log_softmax(outputs["soft"], -1), F.softmax(t_logits, -1), reduction="batchmean") * T * T
ce = F.cross_entropy(outputs["logits"], y)
loss = 0.5 * kd + 0.5 * ce
loss.backward()
