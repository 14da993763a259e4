# label: hazard silent
# why: the adapter's down projection is zero-initialised, so its output is exactly 0 and clamp_(min=0) lets gradient through to it where relu would block it (the adapter would stay dead), so the down-projection gradient differs.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Adapter(nn.Module):
    def __init__(self, dim, bottleneck):
        super().__init__()
        self.down = nn.Linear(dim, bottleneck)
        self.up = nn.Linear(bottleneck, dim)
        nn.init.zeros_(self.down.weight)
        nn.init.zeros_(self.down.bias)

    def forward(self, x):
        z = self.down(x)
        z.clamp_(min=0)  # <-- IPL008: zero-init down projection outputs exactly 0
        return x + self.up(z)


backbone = nn.Linear(6, 6)
for p in backbone.parameters():
    p.requires_grad_(False)
adapter = Adapter(6, 3)
x = torch.randn(8, 6)
y = torch.randn(8, 6)
loss = F.mse_loss(adapter(backbone(x)), y)
loss.backward()
down_grad = adapter.down.weight.grad.clone()
up_grad = adapter.up.weight.grad.clone()
