# label: hazard raises no-twin
# why: fake_out is computed by netD before optimizerD.step() updates netD in place, then reused in the generator loss whose backward still needs the old discriminator weights.
# source: https://github.com/leftthomas/SRGAN/issues/79
import torch
import torch.nn as nn

torch.manual_seed(0)


class TVLoss(nn.Module):
    def __init__(self, tv_loss_weight=1):
        super(TVLoss, self).__init__()
        self.tv_loss_weight = tv_loss_weight

    def forward(self, x):
        batch_size = x.size()[0]
        h_x = x.size()[2]
        w_x = x.size()[3]
        count_h = x[:, :, 1:, :].numel() / batch_size
        count_w = x[:, :, :, 1:].numel() / batch_size
        h_tv = torch.pow((x[:, :, 1:, :] - x[:, :, :h_x - 1, :]), 2).sum()
        w_tv = torch.pow((x[:, :, :, 1:] - x[:, :, :, :w_x - 1]), 2).sum()
        return self.tv_loss_weight * 2 * (h_tv / count_h + w_tv / count_w) / batch_size


class GeneratorLoss(nn.Module):
    def __init__(self):
        super(GeneratorLoss, self).__init__()
        self.loss_network = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(inplace=True)).eval()
        for param in self.loss_network.parameters():
            param.requires_grad = False
        self.mse_loss = nn.MSELoss()
        self.tv_loss = TVLoss()

    def forward(self, out_labels, out_images, target_images):
        adversarial_loss = torch.mean(1 - out_labels)
        perception_loss = self.mse_loss(self.loss_network(out_images), self.loss_network(target_images))
        image_loss = self.mse_loss(out_images, target_images)
        tv_loss = self.tv_loss(out_images)
        return image_loss + 0.001 * adversarial_loss + 0.006 * perception_loss + 2e-8 * tv_loss


class Generator(nn.Module):
    def __init__(self, scale_factor=2):
        super(Generator, self).__init__()
        self.block1 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.PReLU())
        self.upsample = nn.Sequential(nn.Conv2d(8, 3 * scale_factor ** 2, 3, padding=1), nn.PixelShuffle(scale_factor))

    def forward(self, x):
        return (torch.tanh(self.upsample(self.block1(x))) + 1) / 2


class Discriminator(nn.Module):
    def __init__(self):
        super(Discriminator, self).__init__()
        self.net = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.LeakyReLU(0.2),
            nn.Conv2d(8, 8, 3, stride=2, padding=1), nn.BatchNorm2d(8), nn.LeakyReLU(0.2),
            nn.AdaptiveAvgPool2d(1), nn.Conv2d(8, 1, 1))

    def forward(self, x):
        batch_size = x.size(0)
        return torch.sigmoid(self.net(x).view(batch_size))


netG = Generator()
netD = Discriminator()
generator_criterion = GeneratorLoss()
optimizerG = torch.optim.Adam(netG.parameters())
optimizerD = torch.optim.Adam(netD.parameters())

for data, target in [(torch.rand(2, 3, 4, 4), torch.rand(2, 3, 8, 8))]:
    real_img = target
    z = data
    fake_img = netG(z)

    netD.zero_grad()
    real_out = netD(real_img).mean()
    fake_out = netD(fake_img).mean()
    d_loss = 1 - real_out + fake_out
    d_loss.backward(retain_graph=True)
    optimizerD.step()  # <-- IPL001: netD weights change in place; fake_out (reused below) still depends on the old ones

    netG.zero_grad()
    g_loss = generator_criterion(fake_out, fake_img, real_img)
    g_loss.backward()
    optimizerG.step()
