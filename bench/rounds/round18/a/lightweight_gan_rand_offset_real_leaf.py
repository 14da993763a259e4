# label: hazard raises
# why: rand_offset writes the rolled images back into x[image_index] in place; on the discriminator step x is the real image batch that was made a leaf requiring grad for the gradient penalty.
# source: https://github.com/lucidrains/lightweight-gan/commit/5d126850cd448ec854ad9a25ab251f9535983836 (PR https://github.com/lucidrains/lightweight-gan/pull/33)
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

random.seed(3)
torch.manual_seed(0)


def DiffAugment(x, types=[]):
    for p in types:
        for f in AUGMENT_FNS[p]:
            x = f(x)
    return x.contiguous()


def rand_offset(x, ratio=1, ratio_h=1, ratio_v=1):
    w, h = x.size(2), x.size(3)

    for image_index in range(x.size(0)):
        max_h = int(w * ratio * ratio_h)
        max_v = int(h * ratio * ratio_v)

        value_h = random.randint(0, max_h) * 2 - max_h
        value_v = random.randint(0, max_v) * 2 - max_v

        if abs(value_h) > 0:
            x[image_index] = torch.roll(x[image_index], value_h, 2)  # <-- IPL003: writes into the caller's real-image batch, a leaf that requires grad

        if abs(value_v) > 0:
            x[image_index] = torch.roll(x[image_index], value_v, 1)  # <-- IPL003: same in-place write for the vertical offset

    return x


def rand_offset_h(x, ratio=1):
    return rand_offset(x, ratio=1, ratio_h=ratio, ratio_v=0)


def rand_offset_v(x, ratio=1):
    return rand_offset(x, ratio=1, ratio_h=0, ratio_v=ratio)


AUGMENT_FNS = {
    "offset": [rand_offset],
    "offset_h": [rand_offset_h],
    "offset_v": [rand_offset_v],
}


class AugWrapper(nn.Module):
    def __init__(self, D, image_size):
        super().__init__()
        self.D = D

    def forward(self, images, prob=0.0, types=[], detach=False, **kwargs):
        if random.random() < prob:
            images = DiffAugment(images, types=types)
        return self.D(images, **kwargs)


class Discriminator(nn.Module):
    def __init__(self, chan=8):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, chan, 4, stride=2, padding=1), nn.LeakyReLU(0.1), nn.Conv2d(chan, 1, 4))

    def forward(self, x):
        return self.net(x).flatten(1)


def gradient_penalty(images, output, weight=10):
    gradients = torch.autograd.grad(outputs=output, inputs=images, grad_outputs=torch.ones_like(output), create_graph=True, retain_graph=True, only_inputs=True)[0]
    gradients = gradients.reshape(images.shape[0], -1)
    return weight * ((gradients.norm(2, dim=1) - 1) ** 2).mean()


D = Discriminator()
D_aug = AugWrapper(D, 8)
image_batch = torch.rand(2, 3, 8, 8)
image_batch.requires_grad_()
real_output = D_aug(image_batch, prob=1.0, types=["offset"])
divergence = F.relu(1 - real_output).mean()
gp = gradient_penalty(image_batch, real_output)
disc_loss = divergence + gp
disc_loss.backward()
