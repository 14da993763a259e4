# label: safe
# why: the generator step recomputes the real-image discriminator output (detached) after discriminator_optimizer.step(), so no stale graph goes through the updated weights
# source: https://github.com/Lornatang/ESRGAN-PyTorch/issues/5
import torch
import torch.nn as nn

torch.manual_seed(0)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, 1, 1), nn.LeakyReLU(0.2, True),
            nn.Conv2d(8, 8, 4, 2, 1, bias=False), nn.BatchNorm2d(8), nn.LeakyReLU(0.2, True),
        )
        self.classifier = nn.Sequential(nn.Linear(8 * 4 * 4, 16), nn.LeakyReLU(0.2, True), nn.Linear(16, 1))

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1), nn.LeakyReLU(0.2, True), nn.Conv2d(8, 12, 3, 1, 1))
        self.up = nn.PixelShuffle(2)

    def forward(self, x):
        return self.up(self.body(x))


generator = Generator()
discriminator = Discriminator()
adversarial_criterion = nn.BCEWithLogitsLoss()
pixel_criterion = nn.L1Loss()
discriminator_optimizer = torch.optim.Adam(discriminator.parameters(), lr=1e-3)
generator_optimizer = torch.optim.Adam(generator.parameters(), lr=1e-3)

lr = torch.rand(2, 3, 4, 4)
hr = torch.rand(2, 3, 8, 8)
batch_size = lr.size(0)
real_label = torch.full((batch_size, 1), 1, dtype=lr.dtype)
fake_label = torch.full((batch_size, 1), 0, dtype=lr.dtype)

sr = generator(lr)

# (1) Update D network
discriminator_optimizer.zero_grad()
hr_output = discriminator(hr)
sr_output = discriminator(sr.detach())
d_loss_hr = adversarial_criterion(hr_output - torch.mean(sr_output), real_label)
d_loss_sr = adversarial_criterion(sr_output - torch.mean(hr_output), fake_label)
d_loss = (d_loss_hr + d_loss_sr) / 2
d_loss.backward()
discriminator_optimizer.step()

# (2) Update G network
for p in discriminator.parameters():
    p.requires_grad = False
generator_optimizer.zero_grad()
hr_output = discriminator(hr.detach())
sr_output = discriminator(sr)
adversarial_loss = adversarial_criterion(sr_output - torch.mean(hr_output), real_label)
pixel_loss = pixel_criterion(sr, hr)
g_loss = 0.01 * pixel_loss + 0.005 * adversarial_loss
g_loss.backward()
generator_optimizer.step()
