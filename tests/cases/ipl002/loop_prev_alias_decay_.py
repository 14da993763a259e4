# label: hazard silent
# why: prev = h is an alias, so after h.mul_(0.5) the update step reads the decayed state instead of the previous one
import torch
import torch.nn as nn

torch.manual_seed(0)


class Refiner(nn.Module):
    def __init__(self, dim, steps=3):
        super().__init__()
        self.enc = nn.Linear(dim, dim)
        self.step = nn.Linear(dim, dim)
        self.steps = steps

    def forward(self, x):
        h = self.enc(x)
        for _ in range(self.steps):
            prev = h
            h.mul_(0.5)  # <-- IPL002
            h = h + self.step(prev)
        return h


model = Refiner(4)
x = torch.randn(2, 4)
out = model(x)
loss = out.sum()
loss.backward()
