# label: hazard silent
# why: losses_dict['loss_gen_wgan'] = loss_gen.detach() shares loss_gen's storage, so the later loss_gen += pixel / perceptual / style terms overwrite the logged adversarial loss with the running total
# source: https://github.com/open-mmlab/mmagic/commit/34a96cb561f472c72e53f139616d62cf39a963bb (mmedit/models/editors/gcfsr/gcfsr.py, GCFSRGAN.train_step)
import random
from typing import Dict

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor

torch.manual_seed(0)
random.seed(0)


def set_requires_grad(nets, requires_grad=False):
    if not isinstance(nets, list):
        nets = [nets]
    for net in nets:
        for param in net.parameters():
            param.requires_grad = requires_grad


def imresize(img, scale):
    return F.interpolate(img, scale_factor=scale, mode='bilinear', align_corners=False)


class GANLoss(nn.Module):
    def forward(self, pred, target_is_real, is_disc=False):
        return F.softplus(-pred).mean() if target_is_real else F.softplus(pred).mean()


class PerceptualLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.vgg = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 4, 3, padding=1))
        for p in self.vgg.parameters():
            p.requires_grad = False

    @staticmethod
    def _gram(x):
        n, c, h, w = x.size()
        f = x.view(n, c, h * w)
        return f.bmm(f.transpose(1, 2)) / (c * h * w)

    def forward(self, x, gt):
        fx, fg = self.vgg(x), self.vgg(gt.detach())
        percep_loss = F.mse_loss(fx, fg)
        style_loss = F.mse_loss(self._gram(fx), self._gram(fg)) * 10.0
        return percep_loss, style_loss


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.LeakyReLU(0.2), nn.Conv2d(8, 3, 3, padding=1))
        self.cond = nn.Linear(1, 8)

    def forward(self, x, conditions):
        h = self.body[0](x) + self.cond(conditions)[:, :, None, None]
        out = self.body[2](self.body[1](h))
        return x + out, h


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.LeakyReLU(0.2),
                                 nn.Conv2d(8, 1, 3, stride=2, padding=1))

    def forward(self, x):
        return self.net(x).mean(dim=(1, 2, 3))


class GCFSRGAN(nn.Module):
    def __init__(self, rescale_list=(4, 2)):
        super().__init__()
        self.generator = Generator()
        self.discriminator = Discriminator()
        self.rescale_list = list(rescale_list)
        self.condition_norm = max(rescale_list)
        self.gan_loss = GANLoss()
        self.pixel_loss = nn.L1Loss()
        self.perceptual_loss = PerceptualLoss()

    def train_step(self, gt_imgs, optim_wrapper) -> Dict[str, Tensor]:
        losses_dict = dict()
        disc_optimizer_wrapper = optim_wrapper['discriminator']
        gen_optimizer_wrapper = optim_wrapper['generator']

        set_requires_grad(self.discriminator, True)
        disc_optimizer_wrapper.zero_grad()

        scale = random.choice(self.rescale_list)
        input_imgs = imresize(imresize(gt_imgs, 1 / scale), scale)
        conditions = torch.tensor([[scale / self.condition_norm]], dtype=torch.float32)

        fake_imgs, _ = self.generator(input_imgs, conditions)
        fake_pred = self.discriminator(fake_imgs.detach())
        real_pred = self.discriminator(gt_imgs)

        loss_disc = self.gan_loss(real_pred, True, is_disc=True) + self.gan_loss(fake_pred, False, is_disc=True)
        losses_dict['loss_disc'] = loss_disc.detach()
        losses_dict['real_score'] = real_pred.detach().mean()
        losses_dict['fake_score'] = fake_pred.detach().mean()
        loss_disc.backward()
        disc_optimizer_wrapper.step()

        set_requires_grad(self.discriminator, False)
        self.generator.zero_grad()

        fake_imgs, _ = self.generator(input_imgs, conditions)
        fake_pred = self.discriminator(fake_imgs)

        loss_gen = self.gan_loss(fake_pred, True, is_disc=False)
        losses_dict['loss_gen_wgan'] = loss_gen.detach()

        if self.pixel_loss:
            loss_gen_pixel = self.pixel_loss(fake_imgs, gt_imgs)
            loss_gen += loss_gen_pixel  # <-- IPL002: also overwrites the logged losses_dict['loss_gen_wgan'] (a detach() alias)
            losses_dict['loss_gen_pixel'] = loss_gen_pixel.detach()

        if self.perceptual_loss:
            loss_gen_perceptual, loss_gen_style = self.perceptual_loss(fake_imgs, gt_imgs)
            if loss_gen_perceptual is not None:
                loss_gen += loss_gen_perceptual  # <-- IPL002: writes through the logged detach() alias again
                losses_dict['loss_gen_perceptual'] = loss_gen_perceptual.detach()
            if loss_gen_style is not None:
                loss_gen += loss_gen_style  # <-- IPL002: writes through the logged detach() alias again
                losses_dict['loss_gen_style'] = loss_gen_style.detach()

        loss_gen.backward()
        gen_optimizer_wrapper.step()
        return losses_dict


model = GCFSRGAN()
optim_wrapper = {
    'generator': torch.optim.Adam(model.generator.parameters(), lr=2e-3, betas=(0.0, 0.99)),
    'discriminator': torch.optim.Adam(model.discriminator.parameters(), lr=2e-3, betas=(0.0, 0.99)),
}
gt_imgs = torch.rand(2, 3, 8, 8)
log_vars = model.train_step(gt_imgs, optim_wrapper)
loss_gen_wgan = log_vars['loss_gen_wgan']
loss_gen_pixel = log_vars['loss_gen_pixel']
loss_disc = log_vars['loss_disc']
