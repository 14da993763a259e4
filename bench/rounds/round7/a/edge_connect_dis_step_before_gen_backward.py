# label: hazard raises no-twin
# why: EdgeModel.backward() steps the discriminator optimizer before gen_loss.backward(), but gen_loss was built through the discriminator whose weights that step just overwrote in place.
# source: https://github.com/knazeri/edge-connect/issues/188
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)


class EdgeGenerator(nn.Module):
    def __init__(self):
        super(EdgeGenerator, self).__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.InstanceNorm2d(4), nn.ReLU(True))
        self.decoder = nn.Conv2d(4, 1, 3, padding=1)

    def forward(self, x):
        x = self.encoder(x)
        x = self.decoder(x)
        return torch.sigmoid(x)


class Discriminator(nn.Module):
    def __init__(self, in_channels):
        super(Discriminator, self).__init__()
        self.conv1 = nn.Sequential(nn.Conv2d(in_channels, 4, 4, stride=2, padding=1), nn.LeakyReLU(0.2, inplace=True))
        self.conv2 = nn.Sequential(nn.Conv2d(4, 8, 4, stride=2, padding=1), nn.LeakyReLU(0.2, inplace=True))
        self.conv3 = nn.Conv2d(8, 1, 3, padding=1)

    def forward(self, x):
        conv1 = self.conv1(x)
        conv2 = self.conv2(conv1)
        conv3 = self.conv3(conv2)
        return torch.sigmoid(conv3), [conv1, conv2, conv3]


class AdversarialLoss(nn.Module):
    def __init__(self):
        super(AdversarialLoss, self).__init__()
        self.register_buffer('real_label', torch.tensor(1.0))
        self.register_buffer('fake_label', torch.tensor(0.0))
        self.criterion = nn.BCELoss()

    def __call__(self, outputs, is_real, is_disc=None):
        labels = (self.real_label if is_real else self.fake_label).expand_as(outputs)
        return self.criterion(outputs, labels)


class EdgeModel(nn.Module):
    def __init__(self):
        super(EdgeModel, self).__init__()
        self.generator = EdgeGenerator()
        self.discriminator = Discriminator(in_channels=2)
        self.l1_loss = nn.L1Loss()
        self.adversarial_loss = AdversarialLoss()
        self.gen_optimizer = optim.Adam(params=self.generator.parameters(), lr=1e-4, betas=(0.0, 0.9))
        self.dis_optimizer = optim.Adam(params=self.discriminator.parameters(), lr=1e-5, betas=(0.0, 0.9))

    def process(self, images, edges, masks):
        self.gen_optimizer.zero_grad()
        self.dis_optimizer.zero_grad()

        outputs = self(images, edges, masks)
        gen_loss = 0
        dis_loss = 0

        dis_input_real = torch.cat((images, edges), dim=1)
        dis_input_fake = torch.cat((images, outputs.detach()), dim=1)
        dis_real, dis_real_feat = self.discriminator(dis_input_real)
        dis_fake, dis_fake_feat = self.discriminator(dis_input_fake)
        dis_real_loss = self.adversarial_loss(dis_real, True, True)
        dis_fake_loss = self.adversarial_loss(dis_fake, False, True)
        dis_loss += (dis_real_loss + dis_fake_loss) / 2

        gen_input_fake = torch.cat((images, outputs), dim=1)
        gen_fake, gen_fake_feat = self.discriminator(gen_input_fake)
        gen_gan_loss = self.adversarial_loss(gen_fake, True, False)
        gen_loss += gen_gan_loss

        gen_fm_loss = 0
        for i in range(len(dis_real_feat)):
            gen_fm_loss += self.l1_loss(gen_fake_feat[i], dis_real_feat[i].detach())
        gen_fm_loss = gen_fm_loss * 10.0
        gen_loss += gen_fm_loss

        return outputs, gen_loss, dis_loss

    def forward(self, images, edges, masks):
        edges_masked = (edges * (1 - masks))
        images_masked = (images * (1 - masks)) + masks
        inputs = torch.cat((images_masked, edges_masked, masks), dim=1)
        return self.generator(inputs)

    def backward(self, gen_loss=None, dis_loss=None):
        if dis_loss is not None:
            dis_loss.backward()
        self.dis_optimizer.step()  # <-- IPL001: discriminator weights change while gen_loss's graph through the discriminator is still pending

        if gen_loss is not None:
            gen_loss.backward()
        self.gen_optimizer.step()


edge_model = EdgeModel()
images = torch.rand(2, 1, 8, 8)
edges = (torch.rand(2, 1, 8, 8) > 0.5).float()
masks = (torch.rand(2, 1, 8, 8) > 0.7).float()
outputs, gen_loss, dis_loss = edge_model.process(images, edges, masks)
edge_model.backward(gen_loss, dis_loss)
