# label: safe no-twin
# why: ModelEMA.update scales the EMA copy's state_dict tensors in place under torch.no_grad(); those tensors alias the deep-copied EMA model (never the training model), so the training graph and its gradients are untouched and the EMA really accumulates.
# source: https://github.com/ultralytics/yolov5/issues/5241 (utils/torch_utils.py at 84bfa892365cd9d5938ea78494727783482dcad4)
import math
from copy import deepcopy

import torch
import torch.nn as nn

torch.manual_seed(0)


def is_parallel(model):
    return type(model) in (nn.parallel.DataParallel, nn.parallel.DistributedDataParallel)


class ModelEMA:
    def __init__(self, model, decay=0.9999, updates=0):
        # Create EMA
        self.ema = deepcopy(model.module if is_parallel(model) else model).eval()  # FP32 EMA
        self.updates = updates  # number of EMA updates
        self.decay = lambda x: decay * (1 - math.exp(-x / 2000))  # decay exponential ramp (to help early epochs)
        for p in self.ema.parameters():
            p.requires_grad_(False)

    def update(self, model):
        # Update EMA parameters
        with torch.no_grad():
            self.updates += 1
            d = self.decay(self.updates)

            msd = model.module.state_dict() if is_parallel(model) else model.state_dict()  # model state_dict
            for k, v in self.ema.state_dict().items():
                if v.dtype.is_floating_point:
                    v *= d
                    v += (1. - d) * msd[k].detach()


class Detect(nn.Module):
    def __init__(self, nc=2, na=3, ch=8):
        super().__init__()
        self.no = nc + 5
        self.na = na
        self.m = nn.Conv2d(ch, self.no * self.na, 1)

    def forward(self, x):
        bs, _, ny, nx = x.shape
        return self.m(x).view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()


def main():
    model = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.BatchNorm2d(8), nn.SiLU(), Detect())
    ema = ModelEMA(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.937, nesterov=True)
    for i in range(3):
        imgs = torch.rand(2, 3, 16, 16)
        pred = model(imgs)
        loss = pred.sigmoid().mean() + pred[..., :4].pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        ema.update(model)
    return loss.detach(), ema.ema[3].m.weight.detach().clone(), model[3].m.weight.detach().clone()


loss, ema_weight, model_weight = main()
