# label: safe no-twin
# why: ModelEMA.update scales and accumulates the EMA weights in place, but it reads the training model through state_dict() (detached tensors) and the EMA copy has requires_grad disabled and is only used for evaluation, so no graph ever saved the tensors being updated.
# source: https://github.com/ultralytics/yolov5/commit/841f312f9384d3ab8f2ff2ae287441ecfba03740
import math
from copy import deepcopy

import torch
import torch.nn as nn

torch.manual_seed(0)


def is_parallel(model):
    return type(model) in (nn.parallel.DataParallel, nn.parallel.DistributedDataParallel)


def de_parallel(model):
    return model.module if is_parallel(model) else model


class ModelEMA:
    """ Updated Exponential Moving Average (EMA) from https://github.com/rwightman/pytorch-image-models
    Keeps a moving average of everything in the model state_dict (parameters and buffers)
    """

    def __init__(self, model, decay=0.9999, tau=2000, updates=0):
        self.ema = deepcopy(de_parallel(model)).eval()  # FP32 EMA
        self.updates = updates  # number of EMA updates
        self.decay = lambda x: decay * (1 - math.exp(-x / tau))  # decay exponential ramp (to help early epochs)
        for p in self.ema.parameters():
            p.requires_grad_(False)

    def update(self, model):
        # Update EMA parameters
        self.updates += 1
        d = self.decay(self.updates)

        msd = de_parallel(model).state_dict()  # model state_dict
        for k, v in self.ema.state_dict().items():
            if v.dtype.is_floating_point:  # true for FP16 and FP32
                v *= d
                v += (1 - d) * msd[k].detach()


def main():
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.SiLU(), nn.Conv2d(8, 4, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    ema = ModelEMA(model, tau=2)
    for _ in range(3):
        imgs = torch.randn(2, 3, 8, 8)
        targets = torch.randn(2, 4, 8, 8)
        pred = model(imgs)
        loss = (pred - targets).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        ema.update(model)
    with torch.no_grad():
        ema_pred = ema.ema(torch.randn(2, 3, 8, 8))
    return loss.detach(), ema_pred, ema.ema[0].weight.detach().clone()


loss, ema_pred, ema_weight = main()
