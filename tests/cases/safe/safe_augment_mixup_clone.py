# label: safe
# why: torchvision-style photometric transforms clone the image first and then adjust it in place, and mixup blends a cloned batch; the caller's original batch stays intact and is read again afterwards.
import torch
import torch.nn as nn
import torch.nn.functional as F


class ColorJitterLite:
    def __init__(self, brightness=0.2, contrast=0.3):
        self.brightness = brightness
        self.contrast = contrast

    def __call__(self, img):
        img = img.clone()
        b = 1.0 + (torch.rand(()) * 2 - 1) * self.brightness
        c = 1.0 + (torch.rand(()) * 2 - 1) * self.contrast
        img.mul_(b)
        mean = img.mean(dim=(-3, -2, -1), keepdim=True)
        img.sub_(mean)
        img.mul_(c)
        img.add_(mean)
        img.clamp_(0.0, 1.0)
        return img


class Normalize:
    def __init__(self, mean, std, inplace=False):
        self.mean = torch.tensor(mean)[:, None, None]
        self.std = torch.tensor(std)[:, None, None]
        self.inplace = inplace

    def __call__(self, tensor):
        if not self.inplace:
            tensor = tensor.clone()
        tensor.sub_(self.mean)
        tensor.div_(self.std)
        return tensor


def mixup(x, y, num_classes, lam):
    x_mix = x.clone()
    x_mix.mul_(lam)
    x_mix.add_(x.flip(0), alpha=1 - lam)
    y1 = F.one_hot(y, num_classes).float()
    y_mix = y1 * lam + y1.flip(0) * (1 - lam)
    return x_mix, y_mix


torch.manual_seed(0)
raw = torch.rand(4, 3, 6, 6)
labels = torch.tensor([0, 1, 2, 1])
jitter = ColorJitterLite()
norm = Normalize([0.5, 0.4, 0.3], [0.2, 0.25, 0.3])
augmented = torch.stack([norm(jitter(im)) for im in raw])
mixed, soft_targets = mixup(augmented, labels, 3, lam=0.7)

model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(inplace=True),
                      nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 3))
logits = model(mixed)
loss = torch.sum(-soft_targets * F.log_softmax(logits, -1), -1).mean()
loss = loss + 0.1 * model(norm(raw)).pow(2).mean()
loss.backward()
