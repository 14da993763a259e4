# label: hazard silent
# why: avg is just another name for probs_a, so `avg += probs_b` also changes probs_a and the reported single-model accuracy/NLL is really the ensemble's.
import torch
import torch.nn as nn

torch.manual_seed(0)

model_a = nn.Sequential(nn.Linear(5, 12), nn.Tanh(), nn.Linear(12, 3))
model_b = nn.Sequential(nn.Linear(5, 12), nn.Tanh(), nn.Linear(12, 3))
x = torch.randn(32, 5)
y = torch.randint(0, 3, (32,))

with torch.no_grad():
    probs_a = model_a(x).softmax(-1)
    probs_b = model_b(x).softmax(-1)
    avg = probs_a
    avg += probs_b  # <-- IPL002: probs_a is read again below
    nll_a = -probs_a.gather(1, y[:, None]).log().mean()
    nll_ens = -(avg / 2).gather(1, y[:, None]).log().mean()
