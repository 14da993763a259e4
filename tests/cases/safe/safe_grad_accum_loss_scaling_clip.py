# label: safe no-twin
# why: gradient accumulation with a static loss scale unscales p.grad in place and clips it only after all micro-batch backwards, then steps.
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
data = torch.randn(4, 8, 6)
targets = torch.randint(0, 2, (4, 8))
accum, scale = 2, 1024.0

for step in range(2):
    opt.zero_grad()
    for micro in range(accum):
        i = step * accum + micro
        loss = nn.functional.cross_entropy(model(data[i]), targets[i]) / accum
        (loss * scale).backward()
    finite = all(torch.isfinite(p.grad).all() for p in model.parameters())
    for p in model.parameters():
        p.grad.div_(scale)
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    if finite:
        opt.step()
