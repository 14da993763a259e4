# label: hazard raises no-twin
# why: Trainer.forward builds the generator's WGAN loss through the discriminators and returns it in the losses dict, but the training loop runs optimizer_d.step() before losses['g'].backward(), so the discriminator weights it saved have changed
# source: https://github.com/daa233/generative-inpainting-pytorch/issues/62
import torch
import torch.nn as nn
from torch import autograd

torch.manual_seed(0)

config = {'global_wgan_loss_alpha': 1.0, 'coarse_l1_alpha': 1.2, 'wgan_gp_lambda': 10, 'l1_loss_alpha': 1.2,
          'ae_loss_alpha': 1.2, 'gan_loss_alpha': 0.001, 'lr': 1e-4, 'beta1': 0.5, 'beta2': 0.9}


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.coarse = nn.Sequential(nn.Conv2d(4, 8, 3, 1, 1), nn.ELU(), nn.Conv2d(8, 3, 3, 1, 1))
        self.fine = nn.Sequential(nn.Conv2d(4, 8, 3, 1, 1), nn.ELU(), nn.Conv2d(8, 3, 3, 1, 1))

    def forward(self, x, masks):
        x1 = torch.clamp(self.coarse(torch.cat([x, masks], 1)), -1., 1.)
        x1_inpaint = x1 * masks + x * (1. - masks)
        x2 = torch.clamp(self.fine(torch.cat([x1_inpaint, masks], 1)), -1., 1.)
        return x1, x2, None


class GlobalDis(nn.Module):
    def __init__(self, size):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(3, 4, 5, 2, 2), nn.LeakyReLU(0.2))
        self.linear = nn.Linear(4 * (size // 2) * (size // 2), 1)

    def forward(self, x):
        x = self.conv(x)
        return self.linear(x.view(x.size(0), -1))


def local_patch(x, bboxes):
    t, l, h, w = bboxes
    return x[:, :, t:t + h, l:l + w]


class Trainer(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.netG = Generator()
        self.localD = GlobalDis(4)
        self.globalD = GlobalDis(8)
        self.optimizer_g = torch.optim.Adam(self.netG.parameters(), lr=config['lr'],
                                            betas=(config['beta1'], config['beta2']))
        d_params = list(self.localD.parameters()) + list(self.globalD.parameters())
        self.optimizer_d = torch.optim.Adam(d_params, lr=config['lr'], betas=(config['beta1'], config['beta2']))

    def forward(self, x, bboxes, masks, ground_truth):
        losses = {}
        x1, x2, offset_flow = self.netG(x, masks)
        local_patch_gt = local_patch(ground_truth, bboxes)
        x1_inpaint = x1 * masks + ground_truth * (1. - masks)
        x2_inpaint = x2 * masks + ground_truth * (1. - masks)
        local_patch_x1_inpaint = local_patch(x1_inpaint, bboxes)
        local_patch_x2_inpaint = local_patch(x2_inpaint, bboxes)

        local_patch_real_pred, local_patch_fake_pred = \
            self.dis_forward(self.localD, local_patch_gt, local_patch_x2_inpaint.detach())
        global_real_pred, global_fake_pred = self.dis_forward(self.globalD, ground_truth, x2_inpaint.detach())
        losses['wgan_d'] = torch.mean(local_patch_fake_pred - local_patch_real_pred) \
            + torch.mean(global_fake_pred - global_real_pred) * self.config['global_wgan_loss_alpha']
        local_penalty = self.calc_gradient_penalty(self.localD, local_patch_gt, local_patch_x2_inpaint.detach())
        global_penalty = self.calc_gradient_penalty(self.globalD, ground_truth, x2_inpaint.detach())
        losses['wgan_gp'] = local_penalty + global_penalty

        losses['l1'] = nn.L1Loss()(local_patch_x1_inpaint, local_patch_gt) * self.config['coarse_l1_alpha'] \
            + nn.L1Loss()(local_patch_x2_inpaint, local_patch_gt)
        losses['ae'] = nn.L1Loss()(x1 * (1. - masks), ground_truth * (1. - masks)) * self.config['coarse_l1_alpha'] \
            + nn.L1Loss()(x2 * (1. - masks), ground_truth * (1. - masks))

        local_patch_real_pred, local_patch_fake_pred = \
            self.dis_forward(self.localD, local_patch_gt, local_patch_x2_inpaint)
        global_real_pred, global_fake_pred = self.dis_forward(self.globalD, ground_truth, x2_inpaint)
        losses['wgan_g'] = -torch.mean(local_patch_fake_pred) \
            - torch.mean(global_fake_pred) * self.config['global_wgan_loss_alpha']
        return losses, x2_inpaint, offset_flow

    def dis_forward(self, netD, ground_truth, x_inpaint):
        batch_size = ground_truth.size(0)
        batch_data = torch.cat([ground_truth, x_inpaint], dim=0)
        batch_output = netD(batch_data)
        real_pred, fake_pred = torch.split(batch_output, batch_size, dim=0)
        return real_pred, fake_pred

    def calc_gradient_penalty(self, netD, real_data, fake_data):
        batch_size, channel, height, width = real_data.size()
        alpha = torch.rand(batch_size, 1)
        alpha = alpha.expand(batch_size, int(real_data.nelement() // batch_size)).contiguous() \
            .view(batch_size, channel, height, width)
        interpolates = alpha * real_data + ((1 - alpha) * fake_data)
        interpolates = interpolates.requires_grad_().clone()
        disc_interpolates = netD(interpolates)
        grad_outputs = torch.ones(disc_interpolates.size())
        gradients = autograd.grad(outputs=disc_interpolates, inputs=interpolates, grad_outputs=grad_outputs,
                                  create_graph=True, retain_graph=True, only_inputs=True)[0]
        gradients = gradients.view(gradients.size(0), -1)
        return ((gradients.norm(2, dim=1) - 1) ** 2).mean()


trainer = Trainer(config)
ground_truth = torch.rand(2, 3, 8, 8) * 2 - 1
masks = torch.zeros(1, 1, 8, 8)
masks[:, :, 2:6, 2:6] = 1.
x = ground_truth * (1. - masks)
bboxes = (2, 2, 4, 4)

losses, inpainted_result, offset_flow = trainer(x, bboxes, masks, ground_truth)

trainer.optimizer_d.zero_grad()
losses['d'] = losses['wgan_d'] + losses['wgan_gp'] * config['wgan_gp_lambda']
losses['d'].backward()
trainer.optimizer_d.step()  # <-- IPL001: updates discriminator weights that losses['wgan_g'] still back-propagates through

trainer.optimizer_g.zero_grad()
losses['g'] = losses['l1'] * config['l1_loss_alpha'] + losses['ae'] * config['ae_loss_alpha'] \
    + losses['wgan_g'] * config['gan_loss_alpha']
losses['g'].backward()
trainer.optimizer_g.step()
