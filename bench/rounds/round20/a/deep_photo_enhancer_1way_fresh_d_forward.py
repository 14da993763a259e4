# label: safe no-twin
# why: in the 1-Way GAN loop the generator loss calls discriminator(fake_imgs) again after optimizer_d.step(), so the discriminator graph used by gLoss.backward() saved the updated weights; only the (not yet stepped) generator graph is reused.
# source: https://github.com/mtics/deep-photo-enhancer/blob/0016b8bb12eceface30c68f22b26e5e755962778/1WayGAN_Train.py
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)

LEARNING_RATE = 1e-3
BETA1, BETA2 = 0.5, 0.999
ALPHA = 0.1
LAMBDA = 10.0


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(3, 16, 5, padding=2), nn.SELU(), nn.Conv2d(16, 3, 5, padding=2))

    def forward(self, x):
        return x + self.conv(x)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(3, 16, 5, padding=2), nn.LeakyReLU(0.2), nn.Conv2d(16, 1, 5, padding=2))

    def forward(self, x):
        return self.conv(x).mean(dim=(1, 2, 3))


def generatorAdversarialLoss(output_images, discriminator):
    validity = discriminator(output_images)
    return torch.mean(validity)


def discriminatorLoss(d1Real, d1Fake, gradPenalty):
    return (torch.mean(d1Fake) - torch.mean(d1Real)) + (LAMBDA * gradPenalty)


def computeGeneratorLoss(inputs, outputs_g1, discriminator, criterion):
    gen_adv_loss1 = generatorAdversarialLoss(outputs_g1, discriminator)
    i_loss = criterion(inputs, outputs_g1)
    return -gen_adv_loss1 + ALPHA * i_loss


def main():
    generator = Generator()
    discriminator = Discriminator()
    criterion = nn.MSELoss()
    optimizer_g = optim.Adam(generator.parameters(), lr=LEARNING_RATE, betas=(BETA1, BETA2))
    optimizer_d = optim.Adam(discriminator.parameters(), lr=LEARNING_RATE, betas=(BETA1, BETA2))
    batches_done = 0
    for i in range(2):
        trainInput = torch.rand(2, 3, 8, 8)
        real_imgs = torch.rand(2, 3, 8, 8)

        # TRAIN DISCRIMINATOR
        optimizer_d.zero_grad()
        fake_imgs = generator(trainInput)
        realValid = discriminator(real_imgs)
        fakeValid = discriminator(fake_imgs)
        dLoss = discriminatorLoss(realValid, fakeValid, 0.0)
        dLoss.backward(retain_graph=True)
        optimizer_d.step()

        if batches_done % 50 == 0:
            # TRAIN GENERATOR
            optimizer_g.zero_grad()
            gLoss = computeGeneratorLoss(trainInput, fake_imgs, discriminator, criterion)
            gLoss.backward(retain_graph=True)
            optimizer_g.step()
        batches_done += 1
    return dLoss.detach(), gLoss.detach(), generator.conv[0].weight.detach().clone()


dLoss, gLoss, w = main()
