# label: safe
# why: the fix backpropagates and steps the generator before the discriminator; the discriminator loss only runs through detached fakes, and the in-place loss rescaling touches tensors no backward needs.
# source: https://github.com/XiaohangZhan/deocclusion/pull/39
import torch
import torch.nn as nn

torch.manual_seed(0)


def average_gradients(model):
    # single process: nothing to all-reduce
    for p in model.parameters():
        if p.grad is not None:
            p.grad.data /= 1


class InpaintingLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.L1Loss()

    def forward(self, input, mask, output, gt):
        loss_dict = {}
        output_comp = mask * input + (1 - mask) * output
        loss_dict['hole'] = self.l1((1 - mask) * output, (1 - mask) * gt)
        loss_dict['valid'] = self.l1(mask * output, mask * gt)
        loss_dict['comp'] = self.l1(output_comp, gt)
        return loss_dict


class AdversarialLoss(nn.Module):
    def __init__(self, type='nsgan'):
        super().__init__()
        self.type = type
        self.criterion = nn.BCEWithLogitsLoss()

    def forward(self, outputs, is_real, is_disc=None):
        labels = torch.ones_like(outputs) if is_real else torch.zeros_like(outputs)
        return self.criterion(outputs, labels)


class PConvUNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Conv2d(3, 8, 3, padding=1)
        self.dec = nn.Conv2d(8, 3, 3, padding=1)

    def forward(self, x, mask):
        h = torch.relu(self.enc(x * mask))
        return torch.sigmoid(self.dec(h)), mask


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 1, 3, padding=1)

    def forward(self, x):
        feat = torch.nn.functional.leaky_relu(self.conv1(x), 0.2)
        return self.conv2(feat), feat


class PartialCompletionContentCGAN(nn.Module):

    def __init__(self, params):
        super(PartialCompletionContentCGAN, self).__init__()
        self.params = params
        self.world_size = 1
        self.model = PConvUNet()
        self.optim = torch.optim.Adam(
            filter(lambda p: p.requires_grad, self.model.parameters()), lr=params['lr'])
        self.netD = Discriminator()
        self.optimD = torch.optim.Adam(
            self.netD.parameters(), lr=params['lr'] * params['d2g_lr'], betas=(0.0, 0.9))
        self.criterion = InpaintingLoss()
        self.gan_criterion = AdversarialLoss(type=params['gan_type'])

    def set_input(self, rgb, visible_mask, rgb_gt=None):
        self.rgb = rgb
        self.visible_mask3 = visible_mask.repeat(1, 3, 1, 1)
        self.rgb_gt = rgb_gt

    def step(self):
        # output
        output, _ = self.model(self.rgb, self.visible_mask3)

        # discriminator loss
        dis_input_real = self.rgb_gt
        dis_input_fake = output.detach()
        dis_real, _ = self.netD(dis_input_real)
        dis_fake, _ = self.netD(dis_input_fake)
        dis_real_loss = self.gan_criterion(dis_real, True, True) / self.world_size
        dis_fake_loss = self.gan_criterion(dis_fake, False, True) / self.world_size
        dis_loss = (dis_real_loss + dis_fake_loss) / 2

        # generator adversarial loss
        gen_loss = 0
        gen_input_fake = output
        gen_fake, _ = self.netD(gen_input_fake)
        gen_gan_loss = self.gan_criterion(gen_fake, True, False) * \
            self.params['adv_loss_weight'] / self.world_size
        gen_loss += gen_gan_loss

        # other losses
        loss_dict = self.criterion(self.rgb, self.visible_mask3, output, self.rgb_gt)
        for k in loss_dict.keys():
            loss_dict[k] /= self.world_size
        for key, coef in self.params['lambda_dict'].items():
            value = coef * loss_dict[key]
            gen_loss += value

        # create loss dict
        loss_dict['dis'] = dis_loss
        loss_dict['adv'] = gen_gan_loss

        # update
        self.optim.zero_grad()
        gen_loss.backward()
        average_gradients(self.model)
        self.optim.step()

        self.optimD.zero_grad()
        dis_loss.backward()
        average_gradients(self.netD)
        self.optimD.step()

        return loss_dict


params = {'lr': 1e-3, 'd2g_lr': 0.1, 'gan_type': 'nsgan', 'adv_loss_weight': 0.1,
          'lambda_dict': {'hole': 6.0, 'valid': 1.0}}
net = PartialCompletionContentCGAN(params)
rgb = torch.rand(2, 3, 6, 6)
visible_mask = (torch.rand(2, 1, 6, 6) > 0.3).float()
rgb_gt = torch.rand(2, 3, 6, 6)
net.set_input(rgb, visible_mask, rgb_gt)
loss_dict = net.step()
generator = net.model
discriminator = net.netD
