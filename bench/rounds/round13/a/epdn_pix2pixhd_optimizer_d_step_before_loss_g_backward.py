# label: hazard raises no-twin
# why: optimizer_D.step() updates the multiscale discriminator in place between the joint forward and loss_G.backward(), whose graph saved the old D weights.
# source: https://github.com/ErinChen1/EPDN/issues/8
import torch
import torch.nn as nn

torch.manual_seed(0)


class GANLoss(nn.Module):
    def __init__(self):
        super(GANLoss, self).__init__()
        self.loss = nn.MSELoss()

    def __call__(self, input, target_is_real):
        loss = 0
        for pred in input:
            pred = pred[-1]
            target_tensor = torch.full_like(pred, 1.0 if target_is_real else 0.0)
            loss += self.loss(pred, target_tensor)
        return loss


class NLayerDiscriminator(nn.Module):
    def __init__(self, input_nc, ndf=4):
        super(NLayerDiscriminator, self).__init__()
        sequence = [[nn.Conv2d(input_nc, ndf, 3, stride=2, padding=1), nn.LeakyReLU(0.2, True)],
                    [nn.Conv2d(ndf, ndf * 2, 3, stride=2, padding=1), nn.InstanceNorm2d(ndf * 2), nn.LeakyReLU(0.2, True)],
                    [nn.Conv2d(ndf * 2, 1, 3, stride=1, padding=1)]]
        for n in range(len(sequence)):
            setattr(self, 'model' + str(n), nn.Sequential(*sequence[n]))
        self.n_layers = len(sequence)

    def forward(self, input):
        res = [input]
        for n in range(self.n_layers):
            model = getattr(self, 'model' + str(n))
            res.append(model(res[-1]))
        return res[1:]


class MultiscaleDiscriminator(nn.Module):
    def __init__(self, input_nc, num_D=2):
        super(MultiscaleDiscriminator, self).__init__()
        self.num_D = num_D
        for i in range(num_D):
            setattr(self, 'layer' + str(i), NLayerDiscriminator(input_nc))
        self.downsample = nn.AvgPool2d(3, stride=2, padding=[1, 1], count_include_pad=False)

    def forward(self, input):
        result = []
        input_downsampled = input
        for i in range(self.num_D):
            model = getattr(self, 'layer' + str(self.num_D - 1 - i))
            result.append(model(input_downsampled))
            if i != (self.num_D - 1):
                input_downsampled = self.downsample(input_downsampled)
        return result


class EPDNModel(nn.Module):
    def __init__(self):
        super(EPDNModel, self).__init__()
        self.netG = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(True), nn.Conv2d(8, 3, 3, padding=1), nn.Tanh())
        self.netD = MultiscaleDiscriminator(6)
        self.criterionGAN = GANLoss()
        self.criterionFeat = nn.L1Loss()
        self.loss_names = ['G_GAN', 'G_GAN_Feat', 'D_real', 'D_fake']
        self.optimizer_G = torch.optim.Adam(self.netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
        self.optimizer_D = torch.optim.Adam(self.netD.parameters(), lr=2e-4, betas=(0.5, 0.999))

    def discriminate(self, input_label, test_image, use_pool=False):
        input_concat = torch.cat((input_label, test_image.detach()), dim=1)
        return self.netD.forward(input_concat)

    def forward(self, label, image):
        fake_image = self.netG.forward(label)
        pred_fake_pool = self.discriminate(label, fake_image)
        loss_D_fake = self.criterionGAN(pred_fake_pool, False)
        pred_real = self.discriminate(label, image)
        loss_D_real = self.criterionGAN(pred_real, True)
        pred_fake = self.netD.forward(torch.cat((label, fake_image), dim=1))
        loss_G_GAN = self.criterionGAN(pred_fake, True)
        loss_G_GAN_Feat = 0
        for i in range(self.netD.num_D):
            for j in range(len(pred_fake[i]) - 1):
                loss_G_GAN_Feat += self.criterionFeat(pred_fake[i][j], pred_real[i][j].detach()) * 10.0 / self.netD.num_D
        return [loss_G_GAN, loss_G_GAN_Feat, loss_D_real, loss_D_fake], fake_image


class DataParallelLike(nn.Module):
    def __init__(self, module):
        super(DataParallelLike, self).__init__()
        self.module = module

    def forward(self, *args):
        return self.module(*args)


model = DataParallelLike(EPDNModel())
loss_log = []
for i in range(2):
    data = {'label': torch.randn(2, 3, 16, 16), 'image': torch.randn(2, 3, 16, 16)}
    losses, generated = model(data['label'], data['image'])
    losses = [torch.mean(x) if not isinstance(x, int) else x for x in losses]
    loss_dict = dict(zip(model.module.loss_names, losses))
    loss_D = (loss_dict['D_fake'] + loss_dict['D_real']) * 0.5
    loss_G = loss_dict['G_GAN'] + loss_dict.get('G_GAN_Feat', 0)

    ############### Backward Pass ####################
    # update discriminator weights
    model.module.optimizer_D.zero_grad()
    loss_D.backward()
    model.module.optimizer_D.step()  # <-- IPL001: updates netD weights in place, but loss_G's graph still needs the old ones
    # update generator weights
    model.module.optimizer_G.zero_grad()
    loss_G.backward()
    model.module.optimizer_G.step()
    loss_log.append(loss_G.detach())
