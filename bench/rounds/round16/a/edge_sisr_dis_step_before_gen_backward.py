# label: hazard raises no-twin
# why: EdgeModel.backward steps the discriminator optimizer before gen_loss.backward(), but gen_loss was computed through the same discriminator whose weights that step just overwrote in place.
# source: https://github.com/knazeri/edge-informed-sisr/issues/12 (code: https://github.com/knazeri/edge-informed-sisr/blob/67c366a061e2f028ddabc0bd063c0e54f4b179df/src/models.py)
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(0)


def spectral_norm(module, mode=True):
    if mode:
        return nn.utils.spectral_norm(module)
    return module


class Discriminator(nn.Module):
    def __init__(self, in_channels, use_sigmoid=True, use_spectral_norm=True):
        super(Discriminator, self).__init__()
        self.use_sigmoid = use_sigmoid
        self.conv1 = self.features = nn.Sequential(
            spectral_norm(nn.Conv2d(in_channels, 8, kernel_size=4, stride=2, padding=1), use_spectral_norm),
            nn.LeakyReLU(0.2, inplace=True),
        )
        self.conv2 = nn.Sequential(
            spectral_norm(nn.Conv2d(8, 16, kernel_size=4, stride=2, padding=1), use_spectral_norm),
            nn.LeakyReLU(0.2, inplace=True),
        )
        self.conv3 = nn.Sequential(
            spectral_norm(nn.Conv2d(16, 1, kernel_size=3, stride=1, padding=1), use_spectral_norm),
        )

    def forward(self, x):
        conv1 = self.conv1(x)
        conv2 = self.conv2(conv1)
        conv3 = self.conv3(conv2)
        outputs = conv3
        if self.use_sigmoid:
            outputs = torch.sigmoid(conv3)
        return outputs, [conv1, conv2, conv3]


class EdgeGenerator(nn.Module):
    def __init__(self):
        super(EdgeGenerator, self).__init__()
        self.encoder = nn.Sequential(nn.Conv2d(4, 8, 3, padding=1), nn.InstanceNorm2d(8), nn.ReLU(True))
        self.decoder = nn.Sequential(nn.Conv2d(8, 1, 3, padding=1))

    def forward(self, x):
        return torch.sigmoid(self.decoder(self.encoder(x)))


class AdversarialLoss(nn.Module):
    def __init__(self, type='nsgan', target_real_label=1.0, target_fake_label=0.0):
        super(AdversarialLoss, self).__init__()
        self.type = type
        self.register_buffer('real_label', torch.tensor(target_real_label))
        self.register_buffer('fake_label', torch.tensor(target_fake_label))
        self.criterion = nn.BCELoss()

    def __call__(self, outputs, is_real, is_disc=None):
        labels = (self.real_label if is_real else self.fake_label).expand_as(outputs)
        return self.criterion(outputs, labels)


class Config:
    SCALE = 2
    LR = 1e-4
    BETA1 = 0.0
    BETA2 = 0.9
    ADV_LOSS_WEIGHT1 = 1.0
    FM_LOSS_WEIGHT = 10.0


class EdgeModel(nn.Module):
    def __init__(self, config):
        super(EdgeModel, self).__init__()
        self.config = config
        self.iteration = 0
        generator = EdgeGenerator()
        discriminator = Discriminator(in_channels=4, use_sigmoid=True)
        self.add_module('generator', generator)
        self.add_module('discriminator', discriminator)
        self.add_module('l1_loss', nn.L1Loss())
        self.add_module('adversarial_loss', AdversarialLoss())
        self.gen_optimizer = optim.Adam(params=generator.parameters(), lr=float(config.LR), betas=(config.BETA1, config.BETA2))
        self.dis_optimizer = optim.Adam(params=discriminator.parameters(), lr=float(config.LR), betas=(config.BETA1, config.BETA2))

    def process(self, lr_images, hr_images, lr_edges, hr_edges):
        self.iteration += 1
        self.gen_optimizer.zero_grad()
        self.dis_optimizer.zero_grad()

        outputs = self(lr_images, lr_edges)
        gen_loss = 0
        dis_loss = 0

        dis_input_real = torch.cat((hr_images, hr_edges), dim=1)
        dis_input_fake = torch.cat((hr_images, outputs.detach()), dim=1)
        dis_real, dis_real_feat = self.discriminator(dis_input_real)
        dis_fake, dis_fake_feat = self.discriminator(dis_input_fake)
        dis_real_loss = self.adversarial_loss(dis_real, True, True)
        dis_fake_loss = self.adversarial_loss(dis_fake, False, True)
        dis_loss += (dis_real_loss + dis_fake_loss) / 2

        gen_input_fake = torch.cat((hr_images, outputs), dim=1)
        gen_fake, gen_fake_feat = self.discriminator(gen_input_fake)
        gen_gan_loss = self.adversarial_loss(gen_fake, True, False) * self.config.ADV_LOSS_WEIGHT1
        gen_loss += gen_gan_loss

        gen_fm_loss = 0
        for i in range(len(dis_real_feat)):
            gen_fm_loss += self.l1_loss(gen_fake_feat[i], dis_real_feat[i].detach())
        gen_fm_loss = gen_fm_loss * self.config.FM_LOSS_WEIGHT
        gen_loss += gen_fm_loss

        logs = [("l_dis", dis_loss.item()), ("l_gen", gen_gan_loss.item()), ("l_fm", gen_fm_loss.item())]
        return outputs, gen_loss, dis_loss, logs

    def forward(self, lr_images, lr_edges):
        hr_images = F.interpolate(lr_images, scale_factor=self.config.SCALE)
        hr_edges = F.interpolate(lr_edges, scale_factor=self.config.SCALE)
        inputs = torch.cat((hr_images, hr_edges), dim=1)
        return self.generator(inputs)

    def backward(self, gen_loss, dis_loss):
        dis_loss.backward()
        self.dis_optimizer.step()  # <-- IPL001: discriminator weights updated before gen_loss.backward() uses them

        gen_loss.backward()
        self.gen_optimizer.step()


edge_model = EdgeModel(Config())
lr_images = torch.rand(2, 3, 8, 8)
hr_images = torch.rand(2, 3, 16, 16)
lr_edges = (torch.rand(2, 1, 8, 8) > 0.8).float()
hr_edges = (torch.rand(2, 1, 16, 16) > 0.8).float()
outputs, gen_loss, dis_loss, logs = edge_model.process(lr_images, hr_images, lr_edges, hr_edges)
edge_model.backward(gen_loss, dis_loss)
