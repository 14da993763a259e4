# label: safe no-twin
# why: the suggested zero_grad -> backward -> step order gives each network its own forward: the discriminator is stepped on a detached fake, and the generator loss is built from a fresh discriminator pass after that step, so no optimizer update touches weights a pending backward still needs.
# source: https://github.com/xaggi/OGNet/issues/8
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)


class g_net(nn.Module):
    def __init__(self):
        super(g_net, self).__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(1, 8, 5, stride=1),
            nn.BatchNorm2d(8),
            nn.ReLU(True),
            nn.Conv2d(8, 16, 5, stride=1),
            nn.BatchNorm2d(16),
            nn.ReLU(True),
        )
        self.decoder = nn.Sequential(
            nn.ConvTranspose2d(16, 8, 5, stride=1),
            nn.BatchNorm2d(8),
            nn.ReLU(True),
            nn.ConvTranspose2d(8, 1, 5, stride=1),
            nn.Tanh()
        )

    def forward(self, x):
        x = self.encoder(x)
        x = self.decoder(x)
        return x


class Flatten(nn.Module):
    def forward(self, input):
        return input.view(input.size(0), -1)


class d_net(nn.Module):
    def __init__(self):
        super(d_net, self).__init__()
        self.discriminator = nn.Sequential(
            nn.Conv2d(1, 8, 5, stride=2, padding=2),
            nn.BatchNorm2d(8),
            nn.ReLU(True),
            nn.Conv2d(8, 16, 5, stride=2, padding=2),
            nn.ReLU(True),
            Flatten(),
            nn.Linear(16 * 4 * 4, 1),  # output size * output channel
            nn.Sigmoid()
        )

    def forward(self, x):
        x = self.discriminator(x)
        return x


def gaussian(ins, is_training, mean, stddev):
    if is_training:
        noise = torch.randn(ins.size()) * stddev + mean
        return ins + noise
    return ins


class OGNet(nn.Module):
    def __init__(self, batch_size=4, epoch=1, sigma_noise=0.9, g_learning_rate=1e-3, d_learning_rate=1e-4,
                 adversarial_training_factor=0.5):
        super(OGNet, self).__init__()
        self.g = g_net()
        self.d = d_net()
        self.batch_size = batch_size
        self.epoch = epoch
        self.sigma_noise = sigma_noise
        self.g_learning_rate = g_learning_rate
        self.d_learning_rate = d_learning_rate
        self.adversarial_training_factor = adversarial_training_factor
        self.dataloader = [(torch.rand(batch_size, 1, 16, 16) * 2 - 1, torch.zeros(batch_size)) for _ in range(2)]

    def train_ognet(self):
        self.g.train()
        self.d.train()

        # Set optimizators
        g_optim = torch.optim.Adam(self.g.parameters(), lr=self.g_learning_rate)
        d_optim = torch.optim.Adam(self.d.parameters(), lr=self.d_learning_rate)

        fake = torch.ones([self.batch_size], dtype=torch.float32)
        valid = torch.zeros([self.batch_size], dtype=torch.float32)
        losses = []
        for num_epoch in range(self.epoch):
            for i, data in enumerate(self.dataloader):
                input, gt_label = data

                sigma = self.sigma_noise ** 2
                input_w_noise = gaussian(input, 1, 0, sigma)  # Noise
                # Inference from generator
                g_output = self.g(input_w_noise)

                # [zero_grad -> backward -> step] for the discriminator, on a detached fake
                d_optim.zero_grad()
                d_fake_output = self.d(g_output.detach())
                d_real_output = self.d(input)
                d_fake_loss = F.binary_cross_entropy(torch.squeeze(d_fake_output), fake)
                d_real_loss = F.binary_cross_entropy(torch.squeeze(d_real_output), valid)
                d_sum_loss = 0.5 * (d_fake_loss + d_real_loss)
                d_sum_loss.backward()
                d_optim.step()

                # [zero_grad -> backward -> step] for the generator, with a fresh discriminator pass
                g_optim.zero_grad()
                d_fake_output = self.d(g_output)
                g_recon_loss = F.mse_loss(g_output, input)
                g_adversarial_loss = F.binary_cross_entropy(d_fake_output.squeeze(), valid)
                g_sum_loss = (1 - self.adversarial_training_factor) * g_recon_loss + \
                    self.adversarial_training_factor * g_adversarial_loss
                g_sum_loss.backward()
                g_optim.step()
                losses.append(g_sum_loss.detach())
        return losses


def main():
    torch.manual_seed(0)
    model = OGNet()
    losses = model.train_ognet()
    return torch.stack(losses), model.g.encoder[0].weight.detach(), model.d.discriminator[0].weight.detach()


losses, g_weight, d_weight = main()
