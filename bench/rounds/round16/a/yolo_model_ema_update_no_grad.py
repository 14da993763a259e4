# label: safe no-twin
# why: the EMA copy is updated in place under torch.no_grad() from detached state_dict tensors after optimizer.step(), and the EMA model never takes part in the training graph.
# source: https://github.com/ultralytics/ultralytics/pull/25315
import math
from copy import deepcopy

import torch
import torch.nn as nn

torch.manual_seed(0)


def unwrap_model(m):
    return m.module if hasattr(m, 'module') else m


class ModelEMA:
    def __init__(self, model, decay=0.9999, tau=2000, updates=0):
        self.ema = deepcopy(unwrap_model(model)).eval()
        self.updates = updates
        self.decay = lambda x: decay * (1 - math.exp(-x / tau))
        for p in self.ema.parameters():
            p.requires_grad_(False)
        self.enabled = True

    def update(self, model):
        if self.enabled:
            self.updates += 1
            d = self.decay(self.updates)

            msd = unwrap_model(model).state_dict()
            for k, v in self.ema.state_dict().items():
                if v.dtype.is_floating_point:
                    v *= d
                    v += (1 - d) * msd[k].detach()


model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.SiLU(inplace=True), nn.Conv2d(4, 2, 1))
ema = ModelEMA(model, tau=2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for step in range(3):
    imgs = torch.randn(2, 3, 8, 8)
    preds = model(imgs)
    loss = preds.pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    ema.update(model)
ema_out = ema.ema(torch.ones(1, 3, 8, 8))
