# label: safe no-twin
# why: timm ModelEmaV2-style EMA updates shadow weights in place under torch.no_grad after optimizer.step(), when no graph that saved those weights is still waiting for backward.
from copy import deepcopy

import torch
import torch.nn as nn


class ModelEma(nn.Module):
    def __init__(self, model, decay=0.9):
        super().__init__()
        self.module = deepcopy(model)
        self.module.eval()
        for p in self.module.parameters():
            p.requires_grad_(False)
        self.decay = decay

    @torch.no_grad()
    def update(self, model):
        ema_state = self.module.state_dict()
        for name, model_v in model.state_dict().items():
            ema_v = ema_state[name]
            if ema_v.dtype.is_floating_point:
                ema_v.mul_(self.decay)
                ema_v.add_(model_v, alpha=1.0 - self.decay)
            else:
                ema_v.copy_(model_v)

    def forward(self, x):
        return self.module(x)


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(inplace=True), nn.Linear(8, 2))
ema = ModelEma(model)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

for step in range(3):
    x = torch.randn(6, 4)
    y = torch.randn(6, 2)
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    ema.update(model)

with torch.no_grad():
    ema_pred = ema(torch.randn(3, 4))
final_loss = loss.detach()
