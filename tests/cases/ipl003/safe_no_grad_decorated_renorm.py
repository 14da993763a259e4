# label: safe no-twin
# why: max-norm constraint applied in a @torch.no_grad() helper after the optimizer step, an intended parameter update
import torch
import torch.nn as nn

torch.manual_seed(0)


@torch.no_grad()
def apply_max_norm(module, max_norm=1.0):
    for name, p in module.named_parameters():
        if name.endswith("weight"):
            norms = p.norm(dim=1, keepdim=True).clamp(min=max_norm)
            p.mul_(max_norm / norms)


model = nn.Sequential(nn.Linear(5, 6), nn.ReLU(), nn.Linear(6, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.5)
x = torch.randn(8, 5)
t = torch.randint(0, 2, (8,))
loss = nn.functional.cross_entropy(model(x), t)
opt.zero_grad()
loss.backward()
opt.step()
apply_max_norm(model)
