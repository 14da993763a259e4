# label: hazard raises no-twin
# why: fake_output = netD(fake) is computed once with graph, optimizerD.step() then rewrites netD's weights in place, and errG's adversarial term backpropagates through that stale fake_output graph whose conv/linear nodes saved the old weights.
# source: https://github.com/Lornatang/SRGAN-PyTorch/commit/4450108930ee74864c19d3f2a364fdc1abb6ac87
import torch
import torch.nn as nn

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self, upscale_factor=2):
        super(Generator, self).__init__()
        self.conv_block1 = nn.Sequential(nn.Conv2d(3, 16, 9, 1, 4), nn.PReLU())
        self.upsampling = nn.Sequential(
            nn.Conv2d(16, 64, 3, 1, 1),
            nn.PixelShuffle(upscale_factor=upscale_factor),
            nn.PReLU(),
        )
        self.conv_block3 = nn.Conv2d(16, 3, 9, 1, 4)

    def forward(self, x):
        out = self.conv_block1(x)
        out = self.upsampling(out)
        return torch.tanh(self.conv_block3(out))


class Discriminator(nn.Module):
    def __init__(self):
        super(Discriminator, self).__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, 2, 1), nn.LeakyReLU(0.2),
            nn.Conv2d(16, 32, 3, 2, 1), nn.LeakyReLU(0.2),
        )
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(32 * 4 * 4, 1), nn.Sigmoid())

    def forward(self, x):
        return self.classifier(self.features(x))


def main():
    netG = Generator()
    netD = Discriminator()
    feature_extractor = nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1), nn.ReLU()).eval()
    for p in feature_extractor.parameters():
        p.requires_grad = False
    optimizerD = torch.optim.Adam(netD.parameters(), lr=1e-4)
    optimizerG = torch.optim.Adam(netG.parameters(), lr=1e-4)
    content_loss = nn.MSELoss()
    adversarial_loss = nn.BCELoss()

    batch_size = 2
    high_resolution_real_image = torch.rand(batch_size, 3, 16, 16) * 2 - 1
    low_resolution_image = torch.nn.functional.avg_pool2d(high_resolution_real_image, 2)

    high_resolution_fake_image = netG(low_resolution_image)
    real_image = torch.rand(batch_size, 1) * 0.5 + 0.5
    real_label = torch.ones(batch_size, 1)
    fake_image = torch.rand(batch_size, 1) * 0.3

    # (1) Update D network
    netD.zero_grad()
    real_output = netD(high_resolution_real_image)
    errD_real = adversarial_loss(real_output, real_image)
    fake_output = netD(high_resolution_fake_image)
    errD_fake = adversarial_loss(fake_output.detach(), fake_image)
    errD = (errD_real + errD_fake) / 2
    errD.backward()
    optimizerD.step()  # <-- IPL001

    # (2) Update G network
    netG.zero_grad()
    real_features = feature_extractor(high_resolution_real_image)
    fake_features = feature_extractor(high_resolution_fake_image)
    image_content_loss = content_loss(high_resolution_fake_image, high_resolution_real_image)
    feature_content_loss = content_loss(fake_features, real_features) * 0.006
    generator_content_loss = image_content_loss + feature_content_loss
    generator_adversarial_loss = adversarial_loss(fake_output, real_label) * 0.001
    errG = generator_content_loss + generator_adversarial_loss
    errG.backward()
    optimizerG.step()
    return netG.conv_block3.weight.detach().clone(), netD.classifier[1].weight.detach().clone()


g_weight, d_weight = main()
