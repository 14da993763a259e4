# label: safe
# why: the reordering suggested in the issue backpropagates gen_loss and steps the generator before dis_loss.backward() and dis_optimizer.step(), so no discriminator weight changes while a graph that saved it is still pending.
# source: https://github.com/knazeri/edge-connect/issues/152 (src/models.py EdgeModel.backward)
import torch
import torch.nn as nn
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
            spectral_norm(nn.Conv2d(in_channels=in_channels, out_channels=16, kernel_size=4, stride=2, padding=1, bias=not use_spectral_norm), use_spectral_norm),
            nn.LeakyReLU(0.2, inplace=True),
        )
        self.conv2 = nn.Sequential(
            spectral_norm(nn.Conv2d(in_channels=16, out_channels=32, kernel_size=4, stride=2, padding=1, bias=not use_spectral_norm), use_spectral_norm),
            nn.LeakyReLU(0.2, inplace=True),
        )
        self.conv5 = nn.Sequential(
            spectral_norm(nn.Conv2d(in_channels=32, out_channels=1, kernel_size=3, stride=1, padding=1, bias=not use_spectral_norm), use_spectral_norm),
        )

    def forward(self, x):
        conv1 = self.conv1(x)
        conv2 = self.conv2(conv1)
        conv5 = self.conv5(conv2)
        outputs = conv5
        if self.use_sigmoid:
            outputs = torch.sigmoid(conv5)
        return outputs, [conv1, conv2, conv5]


class AdversarialLoss(nn.Module):
    def __init__(self):
        super(AdversarialLoss, self).__init__()
        self.criterion = nn.BCELoss()

    def forward(self, outputs, is_real, is_disc=None):
        labels = torch.ones_like(outputs) if is_real else torch.zeros_like(outputs)
        return self.criterion(outputs, labels)


class EdgeModel(nn.Module):
    def __init__(self, lr=1e-4, d2g_lr=0.1, fm_loss_weight=10.0):
        super(EdgeModel, self).__init__()
        self.generator = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(True), nn.Conv2d(8, 1, 3, padding=1), nn.Sigmoid())
        self.discriminator = Discriminator(in_channels=2, use_sigmoid=True)
        self.l1_loss = nn.L1Loss()
        self.adversarial_loss = AdversarialLoss()
        self.fm_loss_weight = fm_loss_weight
        self.gen_optimizer = optim.Adam(params=self.generator.parameters(), lr=lr, betas=(0.0, 0.9))
        self.dis_optimizer = optim.Adam(params=self.discriminator.parameters(), lr=lr * d2g_lr, betas=(0.0, 0.9))

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
        gen_fm_loss = gen_fm_loss * self.fm_loss_weight
        gen_loss += gen_fm_loss

        return outputs, gen_loss, dis_loss

    def forward(self, images, edges, masks):
        edges_masked = (edges * (1 - masks))
        images_masked = (images * (1 - masks)) + masks
        inputs = torch.cat((images_masked, edges_masked, masks), dim=1)
        outputs = self.generator(inputs)
        return outputs

    def backward(self, gen_loss=None, dis_loss=None):
        if gen_loss is not None:
            gen_loss.backward()
        self.gen_optimizer.step()

        if dis_loss is not None:
            dis_loss.backward()
        self.dis_optimizer.step()


def main():
    model = EdgeModel()
    images = torch.rand(2, 1, 16, 16)
    edges = (torch.rand(2, 1, 16, 16) > 0.8).float()
    masks = (torch.rand(2, 1, 16, 16) > 0.7).float()
    outputs, gen_loss, dis_loss = model.process(images, edges, masks)
    model.backward(gen_loss, dis_loss)
    return gen_loss.detach(), dis_loss.detach(), model.generator[0].weight.detach().clone()


gen_loss, dis_loss, w = main()
