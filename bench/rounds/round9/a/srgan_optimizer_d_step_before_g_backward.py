# label: hazard raises no-twin
# why: optimizerD.step() updates netD's weights in place after fake_out was computed with them, and g_loss.backward() then needs those saved weights
# source: https://github.com/leftthomas/SRGAN/issues/74
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self, scale_factor=2):
        super(Generator, self).__init__()
        self.block1 = nn.Sequential(nn.Conv2d(3, 8, kernel_size=3, padding=1), nn.PReLU())
        self.block2 = nn.Sequential(nn.Conv2d(8, 3 * scale_factor ** 2, kernel_size=3, padding=1),
                                    nn.PixelShuffle(scale_factor))

    def forward(self, x):
        block1 = self.block1(x)
        block2 = self.block2(block1)
        return (torch.tanh(block2) + 1) / 2


class Discriminator(nn.Module):
    def __init__(self):
        super(Discriminator, self).__init__()
        self.net = nn.Sequential(
            nn.Conv2d(3, 8, kernel_size=3, padding=1),
            nn.LeakyReLU(0.2),
            nn.Conv2d(8, 16, kernel_size=3, stride=2, padding=1),
            nn.LeakyReLU(0.2),
            nn.AdaptiveAvgPool2d(1),
            nn.Conv2d(16, 32, kernel_size=1),
            nn.LeakyReLU(0.2),
            nn.Conv2d(32, 1, kernel_size=1),
        )

    def forward(self, x):
        batch_size = x.size(0)
        return torch.sigmoid(self.net(x).view(batch_size))


class GeneratorLoss(nn.Module):
    def __init__(self):
        super(GeneratorLoss, self).__init__()
        self.mse_loss = nn.MSELoss()

    def forward(self, out_labels, out_images, target_images):
        adversarial_loss = torch.mean(1 - out_labels)
        image_loss = self.mse_loss(out_images, target_images)
        return image_loss + 0.001 * adversarial_loss


netG = Generator(2)
netD = Discriminator()
generator_criterion = GeneratorLoss()
optimizerG = optim.Adam(netG.parameters())
optimizerD = optim.Adam(netD.parameters())

data = torch.rand(2, 3, 8, 8)
target = torch.rand(2, 3, 16, 16)

real_img = target
z = data
fake_img = netG(z)

############################
# (1) Update D network: maximize D(x)-1-D(G(z))
###########################
netD.zero_grad()
real_out = netD(real_img).mean()
fake_out = netD(fake_img).mean()
d_loss = 1 - real_out + fake_out
d_loss.backward(retain_graph=True)
optimizerD.step()  # <-- IPL001: updates netD's weights in place; fake_out's graph still needs the old ones

############################
# (2) Update G network: minimize 1-D(G(z)) + Perception Loss + Image Loss + TV Loss
###########################
netG.zero_grad()
g_loss = generator_criterion(fake_out, fake_img, real_img)
g_loss.backward()
optimizerG.step()
