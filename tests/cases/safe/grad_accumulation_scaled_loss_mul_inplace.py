# label: safe
# why: the weighted per-sample loss is the output of a mul, which saves only its inputs, so scaling it in place for gradient accumulation is fine; the running total is a detached buffer.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

model = nn.Linear(4, 3)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
accum_steps = 2
class_weights = torch.tensor([1.0, 2.0, 0.5])

data = [(torch.randn(3, 4), torch.randint(0, 3, (3,))) for _ in range(4)]
running = torch.zeros(())
opt.zero_grad()
for i, (x, y) in enumerate(data):
    per_sample = F.cross_entropy(model(x), y, reduction="none")
    weighted = per_sample * class_weights[y]
    weighted.mul_(1.0 / accum_steps)
    step_loss = weighted.mean()
    step_loss.backward()
    running += step_loss.detach()
    if (i + 1) % accum_steps == 0:
        opt.step()
        opt.zero_grad()

loss = running / len(data)
