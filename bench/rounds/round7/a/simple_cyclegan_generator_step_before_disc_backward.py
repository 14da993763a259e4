# label: hazard raises no-twin
# why: optimizer_g.step() updates netG_x in place while fake_y (not detached) still carries netG_x's graph, and loss_D_x.backward() later backprops through it.
# source: https://github.com/cy-xu/simple_CycleGAN/issues/3
import itertools

import torch as t
import torch.nn as nn

t.manual_seed(0)


class ResnetGenerator(nn.Module):
    def __init__(self, ngf=4):
        super().__init__()
        self.model = nn.Sequential(
            nn.Conv2d(3, ngf, 3, padding=1),
            nn.InstanceNorm2d(ngf),
            nn.ReLU(True),
            nn.Conv2d(ngf, 3, 3, padding=1),
            nn.Tanh(),
        )

    def forward(self, x):
        return self.model(x)


class NLayerDiscriminator(nn.Module):
    def __init__(self, ndf=4):
        super().__init__()
        self.model = nn.Sequential(
            nn.Conv2d(3, ndf, 4, stride=2, padding=1),
            nn.LeakyReLU(0.2, True),
            nn.Conv2d(ndf, 1, 3, padding=1),
        )

    def forward(self, x):
        return self.model(x)


class GANLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer('real_label', t.tensor(1.0))
        self.register_buffer('fake_label', t.tensor(0.0))
        self.loss = nn.MSELoss()

    def __call__(self, prediction, target_is_real):
        target = self.real_label if target_is_real else self.fake_label
        return self.loss(prediction, target.expand_as(prediction))


netG_x, netG_y = ResnetGenerator(), ResnetGenerator()
netD_x, netD_y = NLayerDiscriminator(), NLayerDiscriminator()
criterionGAN = GANLoss()
criterionCycle = nn.L1Loss()
lambda_X = lambda_Y = 10.0
optimizer_g = t.optim.Adam(itertools.chain(netG_x.parameters(), netG_y.parameters()), lr=2e-4)
optimizer_d = t.optim.Adam(itertools.chain(netD_x.parameters(), netD_y.parameters()), lr=2e-4)

dataset = [{'A': t.randn(1, 3, 8, 8), 'B': t.randn(1, 3, 8, 8)}]

for i, data in enumerate(dataset):
    real_x = data['A']
    real_y = data['B']

    # X -> Y' -> X^ cycle
    optimizer_g.zero_grad()
    fake_y = netG_x(real_x)
    prediction = netD_x(fake_y)
    loss_G_X = criterionGAN(prediction, True)
    x_hat = netG_y(fake_y)
    loss_cycle_X = criterionCycle(x_hat, real_x) * lambda_X
    loss_X = loss_G_X + loss_cycle_X
    loss_X.backward(retain_graph=True)
    optimizer_g.step()  # <-- IPL001: updates netG_x weights that fake_y's graph saved; fake_y is backpropagated again by loss_D_x

    # Y -> X' -> Y^ cycle
    optimizer_g.zero_grad()
    fake_x = netG_y(real_y)
    prediction = netD_y(fake_x)
    loss_G_Y = criterionGAN(prediction, True)
    y_hat = netG_x(fake_x)
    loss_cycle_Y = criterionCycle(y_hat, real_y) * lambda_Y
    loss_Y = loss_G_Y + loss_cycle_Y
    loss_Y.backward(retain_graph=True)
    optimizer_g.step()  # <-- IPL001: same, for netG_y / fake_x

    # netD_x
    optimizer_d.zero_grad()
    pred_real = netD_x(real_y)
    loss_D_x_real = criterionGAN(pred_real, True)
    pred_fake = netD_x(fake_y)
    loss_D_x_fake = criterionGAN(pred_fake, False)
    loss_D_x = (loss_D_x_real + loss_D_x_fake) * 0.5
    loss_D_x.backward()
    optimizer_d.step()

    # netD_y
    optimizer_d.zero_grad()
    pred_real = netD_y(real_x)
    loss_D_y_real = criterionGAN(pred_real, True)
    pred_fake = netD_y(fake_x)
    loss_D_y_fake = criterionGAN(pred_fake, False)
    loss_D_y = (loss_D_y_real + loss_D_y_fake) * 0.5
    loss_D_y.backward()
    optimizer_d.step()
