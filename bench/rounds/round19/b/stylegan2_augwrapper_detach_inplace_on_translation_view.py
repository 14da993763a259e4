# label: hazard raises
# why: after the DiffAugment translation the images tensor is a permuted view of the gathered padded batch, and images.detach_() cannot detach a view in place
# source: https://github.com/lucidrains/stylegan2-pytorch/commit/ae7918f2568fa44df15d2c2fca0dc9f9180f9f5e
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
random.seed(0)


def rand_translation(x, ratio=0.125):
    shift_x, shift_y = int(x.size(2) * ratio + 0.5), int(x.size(3) * ratio + 0.5)
    translation_x = torch.randint(-shift_x, shift_x + 1, size=[x.size(0), 1, 1])
    translation_y = torch.randint(-shift_y, shift_y + 1, size=[x.size(0), 1, 1])
    grid_batch, grid_x, grid_y = torch.meshgrid(
        torch.arange(x.size(0)), torch.arange(x.size(2)), torch.arange(x.size(3)), indexing="ij"
    )
    grid_x = torch.clamp(grid_x + translation_x + 1, 0, x.size(2) + 1)
    grid_y = torch.clamp(grid_y + translation_y + 1, 0, x.size(3) + 1)
    x_pad = F.pad(x, [1, 1, 1, 1, 0, 0, 0, 0])
    return x_pad.permute(0, 2, 3, 1).contiguous()[grid_batch, grid_x, grid_y].permute(0, 3, 1, 2)


AUGMENT_FNS = {"translation": [rand_translation]}


def DiffAugment(x, types=()):
    for p in types:
        for f in AUGMENT_FNS[p]:
            x = f(x)
    return x


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.LeakyReLU(0.2), nn.Flatten(), nn.Linear(4 * 8 * 8, 1))

    def forward(self, x):
        return self.net(x), torch.zeros(())


class AugWrapper(nn.Module):
    def __init__(self, D):
        super().__init__()
        self.D = D

    def forward(self, images, prob=0.0, types=(), detach=False):
        if random.random() < prob:
            images = DiffAugment(images, types=types)
        if detach:
            images.detach_()  # <-- IPL001: detaching in place a tensor that is a view produced by the augmentation
        return self.D(images)


G = nn.Sequential(nn.Linear(4, 3 * 8 * 8), nn.Tanh(), nn.Unflatten(1, (3, 8, 8)))
D_aug = AugWrapper(Discriminator())
aug_kwargs = {"prob": 1.0, "types": ["translation"]}

latents = torch.randn(2, 4)
generated_images = G(latents)
fake_output, fake_q_loss = D_aug(generated_images.clone().detach(), detach=True, **aug_kwargs)
real_output, real_q_loss = D_aug(torch.rand(2, 3, 8, 8), **aug_kwargs)
disc_loss = (F.relu(1 + real_output) + F.relu(1 - fake_output)).mean()
disc_loss.backward()
