# label: hazard silent
# why: Cutmix keeps self.prev_input = data (an alias of the current batch) and then pastes a patch into data in place, so the batch stored for the next mix is already cut-mixed and later batches silently mix in corrupted pixels.
# source: https://github.com/bonlime/pytorch-tools/commit/c2c136fce360fae86635b7ca9d9f83f8d2c54a98
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class RunnerState:
    def __init__(self):
        self.is_train = True
        self.input = None


class Callback:
    def __init__(self):
        self.state = None

    def set_state(self, state):
        self.state = state


class Cutmix(Callback):
    """Performs CutMix on input. Only for classification.
    According to https://arxiv.org/abs/2001.06268 mixing images from different batches give better results
    """

    def __init__(self, alpha, num_classes, prob=0.5):
        super().__init__()
        self.tb = torch.distributions.Beta(alpha, alpha)
        self.num_classes = num_classes
        self.prob = prob
        self.prev_input = None

    def on_batch_begin(self):
        self.state.input = self.cutmix(*self.state.input)

    @torch.no_grad()
    def cutmix(self, data, target):
        if len(target.shape) == 1:  # if not one hot
            target_one_hot = torch.zeros(target.size(0), self.num_classes, dtype=torch.float, device=data.device)
            target_one_hot.scatter_(1, target.unsqueeze(1), 1.0)
        else:
            target_one_hot = target
        if not self.state.is_train or torch.rand(1).item() > self.prob:
            return data, target_one_hot
        prev_data, prev_target = (data, target_one_hot) if self.prev_input is None else self.prev_input
        self.prev_input = data, target_one_hot
        # prev_data shape can be different from current. so need to take min
        H, W = min(data.size(2), prev_data.size(2)), min(data.size(3), prev_data.size(3))
        lam = self.tb.sample().item()
        lam = min([lam, 1 - lam])
        bbh1, bbw1, bbh2, bbw2 = self.rand_bbox(H, W, lam)
        # real lambda may be diffrent from sampled. adjust for it
        lam = (bbh2 - bbh1) * (bbw2 - bbw1) / (H * W)
        data[:, :, bbh1:bbh2, bbw1:bbw2] = prev_data[:, :, bbh1:bbh2, bbw1:bbw2]  # <-- IPL002
        mixed_target = (1 - lam) * target_one_hot + lam * prev_target
        return data, mixed_target

    @staticmethod
    def rand_bbox(H, W, lam):
        """ returns bbox with area close to lam*H*W """
        cut_rat = math.sqrt(lam)
        cut_h = int(H * cut_rat)
        cut_w = int(W * cut_rat)
        # uniform
        ch = int(torch.randint(H, (1,)).item())
        cw = int(torch.randint(W, (1,)).item())
        bbh1 = min(max(ch - cut_h // 2, 0), H)
        bbw1 = min(max(cw - cut_w // 2, 0), W)
        bbh2 = min(max(ch + cut_h // 2, 0), H)
        bbw2 = min(max(cw + cut_w // 2, 0), W)
        return bbh1, bbw1, bbh2, bbw2


def main():
    model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 5))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    state = RunnerState()
    cutmix = Cutmix(alpha=1.0, num_classes=5, prob=1.0)
    cutmix.set_state(state)
    loader = [(torch.rand(4, 3, 16, 16), torch.randint(0, 5, (4,))) for _ in range(6)]
    mixed_batches = []
    for images, labels in loader:
        state.input = (images, labels)
        cutmix.on_batch_begin()
        data, target = state.input
        mixed_batches.append(data.clone())
        loss = torch.sum(-target * F.log_softmax(model(data), dim=1), dim=1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return torch.stack(mixed_batches), model[-1].weight.detach().clone()


mixed_batches, fc_weight = main()
