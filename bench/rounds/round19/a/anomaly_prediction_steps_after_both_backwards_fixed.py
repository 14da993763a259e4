# label: safe no-twin
# why: both backward passes run before either optimizer steps, so the discriminator weights that G_l_t's adversarial term saved are still intact when G_l_t.backward() runs.
# source: https://github.com/feiyuhuahuo/Anomaly_Prediction/commit/6295f5d99553461df6689560b66303364059dfc8
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class double_conv(nn.Module):
    def __init__(self, in_ch, out_ch):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(in_ch, out_ch, 3, padding=1, bias=False),
                                  nn.BatchNorm2d(out_ch),
                                  nn.ReLU(inplace=True),
                                  nn.Conv2d(out_ch, out_ch, 3, padding=1, bias=False),
                                  nn.BatchNorm2d(out_ch),
                                  nn.ReLU(inplace=True))

    def forward(self, x):
        return self.conv(x)


class TinyUNet(nn.Module):
    def __init__(self, input_channels, output_channel=3):
        super().__init__()
        self.inc = double_conv(input_channels, 8)
        self.down = nn.Sequential(nn.MaxPool2d(2), double_conv(8, 16))
        self.up = nn.ConvTranspose2d(16, 8, 2, stride=2)
        self.dec = double_conv(16, 8)
        self.outc = nn.Conv2d(8, output_channel, kernel_size=3, padding=1)

    def forward(self, x):
        x1 = self.inc(x)
        x2 = self.down(x1)
        x = self.dec(torch.cat([x1, self.up(x2)], dim=1))
        return torch.tanh(self.outc(x))


class PixelDiscriminator(nn.Module):
    def __init__(self, input_nc, num_filters=(8, 16, 16)):
        super().__init__()
        net = [nn.Conv2d(input_nc, num_filters[0], kernel_size=4, padding=2, stride=2), nn.LeakyReLU(0.2, True)]
        for i in range(1, len(num_filters) - 1):
            net += [nn.Conv2d(num_filters[i - 1], num_filters[i], 4, 2, 2), nn.LeakyReLU(0.2, True)]
        net += [nn.Conv2d(num_filters[-2], num_filters[-1], 4, 1, 2), nn.LeakyReLU(0.2, True)]
        net.append(nn.Conv2d(num_filters[-1], 1, 4, 1, 2))
        self.net = nn.Sequential(*net)

    def forward(self, input):
        return torch.sigmoid(self.net(input))


def intensity_loss(gen_frames, gt_frames):
    return torch.mean(torch.abs((gen_frames - gt_frames) ** 2))


def adversarial_loss(fake_outputs):
    return torch.mean((fake_outputs - 1) ** 2 / 2)


def discriminate_loss(real_outputs, fake_outputs):
    return torch.mean((real_outputs - 1) ** 2 / 2) + torch.mean(fake_outputs ** 2 / 2)


generator = TinyUNet(12, 3)
discriminator = PixelDiscriminator(3)
optimizer_G = torch.optim.Adam(generator.parameters(), lr=2e-4)
optimizer_D = torch.optim.Adam(discriminator.parameters(), lr=2e-5)

clips = torch.randn(2, 15, 16, 16)
input_frames = clips[:, 0:12]
target_frame = clips[:, 12:15]

G_frame = generator(input_frames)
inte_l = intensity_loss(G_frame, target_frame)
g_l = adversarial_loss(discriminator(G_frame))
G_l_t = 1. * inte_l + 0.05 * g_l

# the discriminator sees a detached prediction
D_l = discriminate_loss(discriminator(target_frame), discriminator(G_frame.detach()))

# step only after all the gradients have been computed
optimizer_D.zero_grad()
D_l.backward()
optimizer_G.zero_grad()
G_l_t.backward()
optimizer_D.step()
optimizer_G.step()
