# label: safe
# why: the EMA copy is updated with mul_/add_ inside a @torch.no_grad() method, after the student's backward and step
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ModelEma:
    def __init__(self, model, decay=0.9):
        self.module = copy.deepcopy(model)
        self.module.eval()
        self.decay = decay

    @torch.no_grad()
    def update(self, model):
        for ema_p, p in zip(self.module.parameters(), model.parameters()):
            ema_p.mul_(self.decay).add_(p.detach(), alpha=1.0 - self.decay)


model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(inplace=True), nn.Linear(12, 3))
ema = ModelEma(model, decay=0.9)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)

for step in range(3):
    x = torch.randn(5, 6)
    target = torch.randint(0, 3, (5,))
    loss = F.cross_entropy(model(x), target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    ema.update(model)

ema_weights = [p.detach().clone() for p in ema.module.parameters()]
student_weights = [p.detach().clone() for p in model.parameters()]
