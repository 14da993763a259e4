# label: safe
# why: avg starts as a fresh sum, so `avg /= 2` and the in-place log never touch probs_a or probs_b, which are read afterwards.
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
    avg = probs_a + probs_b
    avg /= 2
    log_avg = avg.gather(1, y[:, None])
    log_avg.log_()
    nll_a = -probs_a.gather(1, y[:, None]).log().mean()
    nll_b = -probs_b.gather(1, y[:, None]).log().mean()
    nll_ens = -log_avg.mean()
