# label: safe no-twin
# why: Mixup mixes the input batch in place on purpose (x[i] = ..., x.mul_(lam).add_(...)) before the model sees it; the per-element mode reads its mixing partners from x_orig = x.clone(), so no already-mixed row is read back, and the batch never requires grad.
# source: https://github.com/huggingface/pytorch-image-models/blob/066e490605ba1d3666861096163246c885603469/timm/data/mixup.py
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def one_hot(x, num_classes, on_value=1., off_value=0., device='cpu'):
    x = x.long().view(-1, 1)
    return torch.full((x.size()[0], num_classes), off_value, device=device).scatter_(1, x, on_value)


def mixup_target(target, num_classes, lam=1., smoothing=0.0, device='cpu'):
    off_value = smoothing / num_classes
    on_value = 1. - smoothing + off_value
    y1 = one_hot(target, num_classes, on_value=on_value, off_value=off_value, device=device)
    y2 = one_hot(target.flip(0), num_classes, on_value=on_value, off_value=off_value, device=device)
    return y1 * lam + y2 * (1. - lam)


class Mixup:
    def __init__(self, mixup_alpha=1., mode='batch', label_smoothing=0.1, num_classes=0):
        self.mixup_alpha = mixup_alpha
        self.mode = mode
        self.label_smoothing = label_smoothing
        self.num_classes = num_classes
        self.beta = torch.distributions.Beta(torch.tensor(mixup_alpha), torch.tensor(mixup_alpha))

    def _params_per_elem(self, batch_size):
        return [float(v) for v in self.beta.sample((batch_size,))]

    def _params_per_batch(self):
        return float(self.beta.sample())

    def _mix_elem(self, x):
        batch_size = len(x)
        lam_batch = self._params_per_elem(batch_size)
        x_orig = x.clone()  # need to keep an unmodified original for mixing source
        for i in range(batch_size):
            j = batch_size - i - 1
            lam = lam_batch[i]
            if lam != 1.:
                x[i] = x[i] * lam + x_orig[j] * (1 - lam)
        return torch.tensor(lam_batch, device=x.device, dtype=x.dtype).unsqueeze(1)

    def _mix_batch(self, x):
        lam = self._params_per_batch()
        if lam == 1.:
            return 1.
        x_flipped = x.flip(0).mul_(1. - lam)
        x.mul_(lam).add_(x_flipped)
        return lam

    def __call__(self, x, target):
        assert len(x) % 2 == 0, 'Batch size should be even when using this'
        if self.mode == 'elem':
            lam = self._mix_elem(x)
        else:
            lam = self._mix_batch(x)
        target = mixup_target(target, self.num_classes, lam, self.label_smoothing, x.device)
        return x, target


def main():
    model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 5))
    total = 0
    for mode in ('elem', 'batch'):
        mixup_fn = Mixup(mixup_alpha=0.8, mode=mode, num_classes=5)
        x = torch.rand(4, 3, 8, 8)
        target = torch.tensor([0, 1, 2, 3])
        x, target = mixup_fn(x, target)
        output = model(x)
        loss = torch.sum(-target * F.log_softmax(output, dim=-1), dim=-1).mean()
        loss.backward()
        total = total + loss.detach()
    return total, model[0].weight.grad


total, grad = main()
