# label: safe no-twin
# why: the WGAN critic weights are clipped through p.data.clamp_ after optimizer_D.step() and before any graph that uses them is built, so no saved tensor is affected
# source: https://github.com/eriklindernoren/PyTorch-GAN/blob/c5d6be170013db8975d96806084df573d87e5d26/implementations/wgan/wgan.py
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


class Opt:
    latent_dim = 4
    clip_value = 0.01
    n_critic = 2
    lr = 0.00005


opt = Opt()
img_shape = (1, 4, 4)


class Generator(nn.Module):
    def __init__(self):
        super(Generator, self).__init__()

        def block(in_feat, out_feat, normalize=True):
            layers = [nn.Linear(in_feat, out_feat)]
            if normalize:
                layers.append(nn.BatchNorm1d(out_feat, 0.8))
            layers.append(nn.LeakyReLU(0.2, inplace=True))
            return layers

        self.model = nn.Sequential(
            *block(opt.latent_dim, 8, normalize=False),
            *block(8, 16),
            nn.Linear(16, int(np.prod(img_shape))),
            nn.Tanh()
        )

    def forward(self, z):
        img = self.model(z)
        img = img.view(img.shape[0], *img_shape)
        return img


class Discriminator(nn.Module):
    def __init__(self):
        super(Discriminator, self).__init__()
        self.model = nn.Sequential(
            nn.Linear(int(np.prod(img_shape)), 16),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(16, 8),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(8, 1),
        )

    def forward(self, img):
        img_flat = img.view(img.shape[0], -1)
        validity = self.model(img_flat)
        return validity


generator = Generator()
discriminator = Discriminator()
optimizer_G = torch.optim.RMSprop(generator.parameters(), lr=opt.lr)
optimizer_D = torch.optim.RMSprop(discriminator.parameters(), lr=opt.lr)

rng = np.random.RandomState(0)
dataloader = [torch.rand(4, *img_shape) for _ in range(4)]
for i, imgs in enumerate(dataloader):
    real_imgs = imgs

    # ---------------------
    #  Train Discriminator
    # ---------------------
    optimizer_D.zero_grad()
    z = torch.tensor(rng.normal(0, 1, (imgs.shape[0], opt.latent_dim)), dtype=torch.float32)
    fake_imgs = generator(z).detach()
    loss_D = -torch.mean(discriminator(real_imgs)) + torch.mean(discriminator(fake_imgs))
    loss_D.backward()
    optimizer_D.step()

    # Clip weights of discriminator
    for p in discriminator.parameters():
        p.data.clamp_(-opt.clip_value, opt.clip_value)

    # Train the generator every n_critic iterations
    if i % opt.n_critic == 0:
        optimizer_G.zero_grad()
        gen_imgs = generator(z)
        loss_G = -torch.mean(discriminator(gen_imgs))
        loss_G.backward()
        optimizer_G.step()
