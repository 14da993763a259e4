# label: hazard raises no-twin
# why: the generator loss is computed through D, then optimizer_D.step() updates D's conv weights in place before g_loss.backward() needs them.
# source: https://github.com/pytorch/pytorch/issues/46638
import torch
import torch.nn as nn

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self, latent_dim=8):
        super(Generator, self).__init__()
        self.l1 = nn.Sequential(nn.Linear(latent_dim, 16 * 4 * 4))
        self.conv_blocks = nn.Sequential(
            nn.BatchNorm2d(16),
            nn.Upsample(scale_factor=2),
            nn.Conv2d(16, 8, 3, stride=1, padding=1),
            nn.BatchNorm2d(8, 0.8),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(8, 1, 3, stride=1, padding=1),
            nn.Tanh(),
        )

    def forward(self, z):
        out = self.l1(z)
        out = out.view(out.shape[0], 16, 4, 4)
        return self.conv_blocks(out)


class Discriminator(nn.Module):
    def __init__(self, in_channels=1):
        super(Discriminator, self).__init__()

        def discrimintor_block(in_features, out_features, normalize=True):
            """Discriminator block"""
            layers = [nn.Conv2d(in_features, out_features, 3, stride=2, padding=1)]
            if normalize:
                layers.append(nn.BatchNorm2d(out_features, 0.8))
            layers.append(nn.LeakyReLU(0.2, inplace=True))
            return layers

        self.model = nn.Sequential(
            *discrimintor_block(in_channels, 8, normalize=False),
            *discrimintor_block(8, 16),
            nn.Conv2d(16, 1, kernel_size=2),
        )

    def forward(self, img):
        return self.model(img)


generator = Generator()
discriminator = Discriminator()
adversarial_loss = nn.MSELoss()
optimizer_G = torch.optim.Adam(generator.parameters(), lr=2e-4, betas=(0.5, 0.999))
optimizer_D = torch.optim.Adam(discriminator.parameters(), lr=2e-4, betas=(0.5, 0.999))

real_imgs = torch.rand(4, 1, 8, 8) * 2 - 1
valid = torch.ones(4, 1, 1, 1)
fake = torch.zeros(4, 1, 1, 1)

optimizer_G.zero_grad()
z = torch.randn(4, 8)
gen_imgs = generator(z)
g_loss = adversarial_loss(discriminator(gen_imgs), valid)

optimizer_D.zero_grad()
real_loss = adversarial_loss(discriminator(real_imgs), valid)
fake_loss = adversarial_loss(discriminator(gen_imgs.detach()), fake)
d_loss = (real_loss + fake_loss) / 2
d_loss.backward()
optimizer_D.step()  # <-- IPL001: updates D weights still needed by g_loss's graph

g_loss.backward()
optimizer_G.step()
