# label: hazard raises no-twin
# why: g_fake = D(prediction) is computed before the discriminator update, then dis_optimizer.step() changes D's weights in place before g_loss.backward() backpropagates through them
# source: https://github.com/geekyutao/RN/pull/19 (main.py train() before "moved discriminator's backward position")
import torch
import torch.nn as nn

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(4, 8, 3, padding=1), nn.ReLU(True), nn.Conv2d(8, 3, 3, padding=1))

    def forward(self, gt, mask):
        x = torch.cat([gt * (1 - mask), mask], dim=1)
        return torch.sigmoid(self.net(x))


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 4, stride=2, padding=1)
        self.conv2 = nn.Conv2d(8, 1, 4, stride=1, padding=1)

    def forward(self, x):
        conv1 = nn.functional.leaky_relu(self.conv1(x), 0.2, inplace=True)
        conv2 = self.conv2(conv1)
        return torch.sigmoid(conv2), [conv1, conv2]


class AdversarialLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.criterion = nn.BCELoss()

    def forward(self, outputs, is_real, is_disc=None):
        labels = torch.ones_like(outputs) if is_real else torch.zeros_like(outputs)
        return self.criterion(outputs, labels)


class InpaintingModel(nn.Module):
    def __init__(self, g_lr, d_lr, l1_weight, gan_weight):
        super().__init__()
        self.generator = Generator()
        self.discriminator = Discriminator()
        self.l1_loss = nn.L1Loss()
        self.adversarial_loss = AdversarialLoss()
        self.l1_weight = l1_weight
        self.gan_weight = gan_weight
        self.gen_optimizer = torch.optim.Adam(self.generator.parameters(), lr=g_lr)
        self.dis_optimizer = torch.optim.Adam(self.discriminator.parameters(), lr=d_lr)
        self.global_iter = 0


model = InpaintingModel(g_lr=1e-4, d_lr=1e-5, l1_weight=1.0, gan_weight=0.1)
training_data = [(torch.rand(2, 3, 8, 8), (torch.rand(2, 1, 8, 8) > 0.5).float(), 0)]


def train(epoch):
    avg_g_loss, avg_d_loss, avg_l1_loss, avg_gan_loss = 0, 0, 0, 0
    model.train()
    for batch in training_data:
        gt, mask, index = batch

        prediction = model.generator(gt, mask)

        # Compute Loss
        g_loss, d_loss = 0, 0

        d_real, _ = model.discriminator(gt)
        d_fake, _ = model.discriminator(prediction.detach())
        d_real_loss = model.adversarial_loss(d_real, True, True)
        d_fake_loss = model.adversarial_loss(d_fake, False, True)
        d_loss += (d_real_loss + d_fake_loss) / 2

        g_fake, _ = model.discriminator(prediction)
        g_gan_loss = model.adversarial_loss(g_fake, True, False)
        g_loss += model.gan_weight * g_gan_loss
        g_l1_loss = model.l1_loss(gt, prediction) / torch.mean(mask)
        g_loss += model.l1_weight * g_l1_loss

        # Record
        avg_l1_loss += g_l1_loss.data.item()
        avg_gan_loss += g_gan_loss.data.item()
        avg_g_loss += g_loss.data.item()
        avg_d_loss += d_loss.data.item()

        # Backward
        d_loss.backward()
        model.dis_optimizer.step()  # <-- IPL001: updates D's weights that g_fake's graph saved, before g_loss.backward()
        model.dis_optimizer.zero_grad()

        g_loss.backward()
        model.gen_optimizer.step()
        model.gen_optimizer.zero_grad()

        model.global_iter += 1
    return avg_g_loss, avg_d_loss


avg_g_loss, avg_d_loss = train(1)
