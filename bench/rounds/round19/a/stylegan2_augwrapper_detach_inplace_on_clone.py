# label: safe
# why: AugWrapper calls images.detach_() only when the caller already passed generated_images.clone().detach(), so the in-place detach touches a private copy and never the generator's graph.
# source: https://github.com/lucidrains/stylegan2-pytorch/commit/ae7918f2568fa44df15d2c2fca0dc9f9180f9f5e
import random
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
random.seed(0)


def random_hflip(tensor, prob):
    if prob > random.random():
        return tensor
    return torch.flip(tensor, dims=(3,))


def DiffAugment(x, types=[]):
    for p in types:
        if p == 'brightness':
            x = x + (torch.rand(x.size(0), 1, 1, 1) - 0.5)
    return x.contiguous()


class AugWrapper(nn.Module):
    def __init__(self, D, image_size):
        super().__init__()
        self.D = D

    def forward(self, images, prob=0., types=[], detach=False):
        if random.random() < prob:
            images = random_hflip(images, prob=0.5)
            images = DiffAugment(images, types=types)

        if detach:
            images.detach_()

        return self.D(images)


G = nn.Sequential(nn.Linear(4, 3 * 8 * 8), nn.Tanh(), nn.Unflatten(1, (3, 8, 8)))
D = nn.Sequential(nn.Conv2d(3, 4, 3, 2, 1), nn.LeakyReLU(0.2), nn.Flatten(), nn.Linear(4 * 4 * 4, 1))
D_aug = AugWrapper(D, 8)
G_opt = torch.optim.Adam(G.parameters(), lr=1e-3)
D_opt = torch.optim.Adam(D.parameters(), lr=1e-3)
aug_kwargs = {'prob': 0.5, 'types': ['brightness']}

image_batch = torch.randn(2, 3, 8, 8)
style = torch.randn(2, 4)

# train discriminator
D_opt.zero_grad()
generated_images = G(style)
fake_output = D_aug(generated_images.clone().detach(), detach=True, **aug_kwargs)
real_output = D_aug(image_batch, **aug_kwargs)
divergence = (F.relu(1 + real_output) + F.relu(1 - fake_output)).mean()
disc_loss = divergence
disc_loss.backward()
D_opt.step()

# train generator
G_opt.zero_grad()
generated_images = G(style)
fake_output = D_aug(generated_images, **aug_kwargs)
gen_loss = fake_output.mean()
gen_loss.backward()
G_opt.step()

total_disc_loss = disc_loss.detach()
total_gen_loss = gen_loss.detach()
