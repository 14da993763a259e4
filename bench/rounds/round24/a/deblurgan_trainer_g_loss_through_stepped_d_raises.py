# label: hazard raises no-twin
# why: the generator loss reuses deblurred_discriminator_out, computed before the discriminator update, so generator_loss.backward() runs through D's graph whose conv weights discriminator_optimizer.step() has already changed in place.
# source: https://github.com/fourson/DeblurGAN-pytorch/issues/6 (fixed in commit 41696fc6c68ef2a3924dfbddc0ece69821e5678b)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ResNetGenerator(nn.Module):
    def __init__(self, ngf=8):
        super().__init__()
        self.model = nn.Sequential(
            nn.Conv2d(3, ngf, 3, padding=1), nn.InstanceNorm2d(ngf), nn.ReLU(True),
            nn.Conv2d(ngf, 3, 3, padding=1), nn.Tanh(),
        )

    def forward(self, x):
        return self.model(x)


class NLayerDiscriminator(nn.Module):
    def __init__(self, ndf=8, use_sigmoid=True):
        super().__init__()
        sequence = [nn.Conv2d(3, ndf, 4, stride=2, padding=1), nn.LeakyReLU(0.2, True),
                    nn.Conv2d(ndf, 1, 4, stride=2, padding=1)]
        if use_sigmoid:
            sequence += [nn.Sigmoid()]
        self.model = nn.Sequential(*sequence)

    def forward(self, x):
        return self.model(x)


CONV3_3_IN_VGG_19 = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(True))
for p in CONV3_3_IN_VGG_19.parameters():
    p.requires_grad_(False)


def perceptual_loss(deblurred, sharp):
    model = CONV3_3_IN_VGG_19
    deblurred_feature_map = model.forward(deblurred)
    sharp_feature_map = model.forward(sharp).detach()
    return F.mse_loss(deblurred_feature_map, sharp_feature_map)


def gan_loss(type, **kwargs):
    if type == 'G':
        deblurred_discriminator_out = kwargs['deblurred_discriminator_out']
        return F.binary_cross_entropy(deblurred_discriminator_out, torch.ones_like(deblurred_discriminator_out))
    elif type == 'D':
        sharp_discriminator_out = kwargs['sharp_discriminator_out']
        deblurred_discriminator_out = kwargs['deblurred_discriminator_out']
        real_loss = F.binary_cross_entropy(sharp_discriminator_out, torch.ones_like(sharp_discriminator_out))
        fake_loss = F.binary_cross_entropy(deblurred_discriminator_out, torch.zeros_like(deblurred_discriminator_out))
        return (real_loss + fake_loss) / 2.0


class Trainer:
    def __init__(self):
        self.generator = ResNetGenerator()
        self.discriminator = NLayerDiscriminator()
        self.adversarial_loss = gan_loss
        self.content_loss = perceptual_loss
        self.generator_optimizer = torch.optim.Adam(self.generator.parameters(), lr=1e-3)
        self.discriminator_optimizer = torch.optim.Adam(self.discriminator.parameters(), lr=1e-3)
        self.content_loss_lambda = 100

    def _train_epoch(self, data_loader):
        total_generator_loss = 0
        for batch_idx, sample in enumerate(data_loader):
            blurred = sample['blurred']
            sharp = sample['sharp']

            deblurred = self.generator(blurred)

            sharp_discriminator_out = self.discriminator(sharp)
            deblurred_discriminator_out = self.discriminator(deblurred)

            critic_updates = 1
            discriminator_loss = 0
            for i in range(critic_updates):
                self.discriminator_optimizer.zero_grad()
                kwargs = {
                    'sharp_discriminator_out': sharp_discriminator_out,
                    'deblurred_discriminator_out': deblurred_discriminator_out
                }
                discriminator_loss_per_update = self.adversarial_loss('D', **kwargs)
                discriminator_loss_per_update.backward(retain_graph=True)
                self.discriminator_optimizer.step()  # <-- IPL001
                discriminator_loss += discriminator_loss_per_update.item()

            # train generator
            self.generator_optimizer.zero_grad()
            kwargs = {'deblurred_discriminator_out': deblurred_discriminator_out}
            adversarial_loss_g = self.adversarial_loss('G', **kwargs)
            content_loss_g = self.content_loss(deblurred, sharp) * self.content_loss_lambda
            generator_loss = adversarial_loss_g + content_loss_g
            generator_loss.backward()
            self.generator_optimizer.step()
            total_generator_loss += generator_loss.item()
        return total_generator_loss


def main():
    trainer = Trainer()
    data_loader = [{'blurred': torch.rand(2, 3, 8, 8) * 2 - 1, 'sharp': torch.rand(2, 3, 8, 8) * 2 - 1}]
    total = trainer._train_epoch(data_loader)
    return torch.tensor(total), trainer.generator.model[0].weight.detach()


total_generator_loss, g_weight = main()
