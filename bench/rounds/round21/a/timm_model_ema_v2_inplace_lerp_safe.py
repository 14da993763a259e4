# label: safe no-twin
# why: ModelEmaV2 updates the EMA copy with e.mul_(decay).add_(m, ...) on state_dict tensors inside torch.no_grad(), after optimizer.step(); those tensors belong to a separate, detached module that no live graph saved, so the in-place EMA update is harmless (and is the intended state mutation).
# source: https://github.com/huggingface/pytorch-image-models/commit/6ec5cd6a99911f2ae771536fc9dd382243069105
from copy import deepcopy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ModelEmaV2(nn.Module):
    def __init__(self, model, decay=0.9999, device=None):
        super(ModelEmaV2, self).__init__()
        # make a copy of the model for accumulating moving average of weights
        self.module = deepcopy(model)
        self.module.eval()
        self.decay = decay
        self.device = device
        if self.device is not None:
            self.module.to(device=device)

    def _update(self, model, update_fn):
        with torch.no_grad():
            for ema_v, model_v in zip(self.module.state_dict().values(), model.state_dict().values()):
                if self.device is not None:
                    model_v = model_v.to(device=self.device)
                update_fn(ema_v, model_v)

    def update(self, model):

        def ema_update(e, m):
            if m.is_floating_point():
                e.mul_(self.decay).add_(m, alpha=1 - self.decay)

        self._update(model, update_fn=ema_update)

    def set(self, model):
        self._update(model, update_fn=lambda e, m: e.copy_(m))


def main():
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 4),
    )
    model_ema = ModelEmaV2(model, decay=0.9)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for step in range(3):
        images = torch.randn(4, 3, 8, 8)
        target = torch.randint(0, 4, (4,))
        output = model(images)
        loss = F.cross_entropy(output, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        model_ema.update(model)
    with torch.no_grad():
        ema_out = model_ema.module(torch.randn(2, 3, 8, 8))
    return model_ema.module[5].weight.detach().clone(), ema_out


ema_weight, ema_logits = main()
