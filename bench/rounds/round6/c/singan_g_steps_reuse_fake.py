# label: hazard raises no-twin
# why: every G step backprops errG through the same `fake` produced in the last D step, but optimizerG.step() updates netG in place after the first G step, so the second errG.backward() meets netG weights that fake's graph saved at the old version.
# source: https://github.com/tamarott/SinGAN/issues/148 (SinGAN/training.py train_single_scale; see also https://github.com/tamarott/SinGAN/pull/126)
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)


class ConvBlock(nn.Sequential):
    def __init__(self, in_channel, out_channel, ker_size, padd, stride):
        super(ConvBlock, self).__init__()
        self.add_module('conv', nn.Conv2d(in_channel, out_channel, kernel_size=ker_size, stride=stride, padding=padd))
        self.add_module('norm', nn.BatchNorm2d(out_channel))
        self.add_module('LeakyRelu', nn.LeakyReLU(0.2, inplace=True))


class WDiscriminator(nn.Module):
    def __init__(self, opt):
        super(WDiscriminator, self).__init__()
        N = opt.nfc
        self.head = ConvBlock(opt.nc_im, N, opt.ker_size, opt.padd_size, 1)
        self.body = nn.Sequential(ConvBlock(N, N, opt.ker_size, opt.padd_size, 1))
        self.tail = nn.Conv2d(N, 1, kernel_size=opt.ker_size, stride=1, padding=opt.padd_size)

    def forward(self, x):
        x = self.head(x)
        x = self.body(x)
        x = self.tail(x)
        return x


class GeneratorConcatSkip2CleanAdd(nn.Module):
    def __init__(self, opt):
        super(GeneratorConcatSkip2CleanAdd, self).__init__()
        N = opt.nfc
        self.head = ConvBlock(opt.nc_im, N, opt.ker_size, opt.padd_size, 1)
        self.body = nn.Sequential(ConvBlock(N, N, opt.ker_size, opt.padd_size, 1))
        self.tail = nn.Sequential(
            nn.Conv2d(N, opt.nc_im, kernel_size=opt.ker_size, stride=1, padding=opt.padd_size),
            nn.Tanh()
        )

    def forward(self, x, y):
        x = self.head(x)
        x = self.body(x)
        x = self.tail(x)
        ind = int((y.shape[2] - x.shape[2]) / 2)
        y = y[:, :, ind:(y.shape[2] - ind), ind:(y.shape[3] - ind)]
        return x + y


def calc_gradient_penalty(netD, real_data, fake_data, LAMBDA):
    alpha = torch.rand(1, 1)
    alpha = alpha.expand(real_data.size())
    interpolates = alpha * real_data + ((1 - alpha) * fake_data)
    interpolates = interpolates.detach().requires_grad_(True)
    disc_interpolates = netD(interpolates)
    gradients = torch.autograd.grad(outputs=disc_interpolates, inputs=interpolates,
                                    grad_outputs=torch.ones(disc_interpolates.size()),
                                    create_graph=True, retain_graph=True, only_inputs=True)[0]
    gradient_penalty = ((gradients.norm(2, dim=1) - 1) ** 2).mean() * LAMBDA
    return gradient_penalty


def train_single_scale(netD, netG, real, opt):
    opt.nzx = real.shape[2]
    opt.nzy = real.shape[3]
    pad_noise = int(((opt.ker_size - 1) * opt.num_layer) / 2)
    pad_image = int(((opt.ker_size - 1) * opt.num_layer) / 2)
    m_noise = nn.ZeroPad2d(int(pad_noise))
    m_image = nn.ZeroPad2d(int(pad_image))
    alpha = opt.alpha

    optimizerD = optim.Adam(netD.parameters(), lr=opt.lr_d, betas=(opt.beta1, 0.999))
    optimizerG = optim.Adam(netG.parameters(), lr=opt.lr_g, betas=(opt.beta1, 0.999))

    for epoch in range(opt.niter):
        z_opt = torch.randn(1, 1, opt.nzx, opt.nzy)
        z_opt = m_noise(z_opt.expand(1, 3, opt.nzx, opt.nzy))
        noise_ = torch.randn(1, 1, opt.nzx, opt.nzy)
        noise_ = m_noise(noise_.expand(1, 3, opt.nzx, opt.nzy))

        # (1) Update D network: maximize D(x) + D(G(z))
        for j in range(opt.Dsteps):
            netD.zero_grad()
            output = netD(real)
            errD_real = -output.mean()
            errD_real.backward(retain_graph=True)

            if (j == 0) & (epoch == 0):
                prev = torch.full([1, opt.nc_z, opt.nzx, opt.nzy], 0.)
                prev = m_image(prev)
                z_prev = torch.full([1, opt.nc_z, opt.nzx, opt.nzy], 0.)
                z_prev = m_noise(z_prev)
                opt.noise_amp = 1

            noise = noise_
            fake = netG(noise.detach(), prev)
            output = netD(fake.detach())
            errD_fake = output.mean()
            errD_fake.backward(retain_graph=True)

            gradient_penalty = calc_gradient_penalty(netD, real, fake, opt.lambda_grad)
            gradient_penalty.backward()
            errD = errD_real + errD_fake + gradient_penalty
            optimizerD.step()

        # (2) Update G network: maximize D(G(z))
        for j in range(opt.Gsteps):
            netG.zero_grad()
            output = netD(fake)
            errG = -output.mean()
            errG.backward(retain_graph=True)
            if alpha != 0:
                loss = nn.MSELoss()
                Z_opt = opt.noise_amp * z_opt + z_prev
                rec_loss = alpha * loss(netG(Z_opt.detach(), z_prev), real)
                rec_loss.backward(retain_graph=True)
                rec_loss = rec_loss.detach()
            optimizerG.step()  # <-- IPL001: updates netG in place while `fake`'s graph (reused by the next G step) still needs its old weights
    return errD.detach(), errG.detach(), rec_loss


opt = SimpleNamespace(nfc=4, nc_im=3, nc_z=3, ker_size=3, padd_size=0, num_layer=3, niter=1, Dsteps=2, Gsteps=2,
                      lr_d=5e-4, lr_g=5e-4, beta1=0.5, alpha=10, lambda_grad=0.1)
netD = WDiscriminator(opt)
netG = GeneratorConcatSkip2CleanAdd(opt)
real = torch.rand(1, 3, 8, 8) * 2 - 1
errD, errG, rec_loss = train_single_scale(netD, netG, real, opt)
