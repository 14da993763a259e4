# label: hazard raises no-twin
# why: forward() runs netf_s on fake_B to build pfB for the semantic loss, then optimize_parameters steps optimizer_f_s (an in-place update of netf_s's conv weights, which that forward saved to backprop into fake_B) before loss_G.backward() reaches pfB.
# source: https://github.com/jolibrain/joliGEN/commit/283cb8561800c9fe6dd3e2b9777c5f8f8dc94134 (PR #23, reported in PR #20)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Opt:
    lambda_GAN = 1.0
    lambda_NCE = 0.0
    nce_idt = False
    isTrain = True
    flip_equivariance = False
    train_f_s_B = False
    netF = 'mlp_sample'


class CUTSemanticMaskModel:
    def __init__(self, opt):
        self.opt = opt
        self.netG = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 3, 3, padding=1), nn.Tanh())
        self.netD = nn.Sequential(nn.Conv2d(3, 8, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(8, 1, 4, 1, 1))
        self.netf_s = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 2, 1))
        self.criterionGAN = nn.MSELoss(reduction='none')
        self.criterionf_s = nn.NLLLoss()
        self.optimizer_G = torch.optim.Adam(self.netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
        self.optimizer_D = torch.optim.Adam(self.netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
        self.optimizer_f_s = torch.optim.Adam(self.netf_s.parameters(), lr=2e-4)

    def set_requires_grad(self, nets, requires_grad=False):
        if not isinstance(nets, list):
            nets = [nets]
        for net in nets:
            if net is not None:
                for param in net.parameters():
                    param.requires_grad = requires_grad

    def set_input(self, input):
        self.real_A = input['A']
        self.real_B = input['B']
        self.input_A_label = input['A_label']

    def gan_loss(self, prediction, target_is_real):
        target = torch.ones_like(prediction) if target_is_real else torch.zeros_like(prediction)
        return self.criterionGAN(prediction, target)

    def forward(self):
        self.real = self.real_A
        self.fake = self.netG(self.real)
        self.fake_B = self.fake[:self.real_A.size(0)]
        d = 1
        self.pred_real_A = self.netf_s(self.real_A)
        self.gt_pred_A = F.log_softmax(self.pred_real_A, dim=d).argmax(dim=d)
        self.pred_fake_B = self.netf_s(self.fake_B)
        self.pfB = F.log_softmax(self.pred_fake_B, dim=d)
        self.pfB_max = self.pfB.argmax(dim=d)

    def compute_D_loss(self):
        fake = self.fake_B.detach()
        self.loss_D_fake = self.gan_loss(self.netD(fake), False).mean()
        self.loss_D_real = self.gan_loss(self.netD(self.real_B), True).mean()
        return (self.loss_D_fake + self.loss_D_real) * 0.5

    def compute_G_loss(self):
        """Calculate GAN and NCE loss for the generator"""
        fake = self.fake_B
        pred_fake = self.netD(fake)
        self.loss_G_GAN = self.gan_loss(pred_fake, True).mean() * self.opt.lambda_GAN
        self.loss_sem = self.criterionf_s(self.pfB, self.input_A_label)
        if self.loss_f_s.detach().item() > 1.0:
            self.loss_sem = 0 * self.loss_sem
        self.loss_G = self.loss_G_GAN + self.loss_sem
        return self.loss_G

    def backward_f_s(self):
        label_A = self.input_A_label
        # forward only real source image through semantic classifier
        pred_A = self.netf_s(self.real_A)
        self.loss_f_s = self.criterionf_s(F.log_softmax(pred_A, dim=1), label_A)
        self.loss_f_s.backward()

    def optimize_parameters(self):
        # forward
        self.forward()

        # update D
        self.set_requires_grad(self.netD, True)
        self.optimizer_D.zero_grad()
        self.loss_D = self.compute_D_loss()
        self.loss_D.backward()
        self.optimizer_D.step()

        self.set_requires_grad(self.netf_s, True)
        self.backward_f_s()
        self.optimizer_f_s.step()  # <-- IPL001
        self.set_requires_grad(self.netf_s, False)

        # update G
        self.set_requires_grad(self.netD, False)
        self.optimizer_G.zero_grad()
        self.loss_G = self.compute_G_loss()
        self.loss_G.backward()
        self.optimizer_G.step()


def main():
    model = CUTSemanticMaskModel(Opt())
    model.set_requires_grad(model.netf_s, False)
    data = {
        'A': torch.rand(2, 3, 8, 8) * 2 - 1,
        'B': torch.rand(2, 3, 8, 8) * 2 - 1,
        'A_label': torch.randint(0, 2, (2, 8, 8)),
    }
    model.set_input(data)
    model.optimize_parameters()
    return model.loss_G.detach(), model.loss_D.detach(), model.netG[0].weight.detach().clone()


loss_G, loss_D, g_weight = main()
