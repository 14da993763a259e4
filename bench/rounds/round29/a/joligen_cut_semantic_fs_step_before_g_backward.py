# label: hazard raises no-twin
# why: optimizer_f_s.step() updates netf_s's conv weights in place after forward() already ran netf_s on fake_B, so loss_G.backward() through pfB needs the saved (old) conv weights and finds them modified.
# source: https://github.com/jolibrain/joliGEN/commit/6245fe77490f80823986bdd5659c7b088bddc65c (fix: in place gradient error with f_s; pre-fix models/cut_semantic_mask_model.py)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def define_f(input_nc, nclasses):
    return nn.Sequential(
        nn.Conv2d(input_nc, 8, 3, padding=1),
        nn.ReLU(),
        nn.Conv2d(8, nclasses, 3, padding=1),
    )


class Opt:
    input_nc = 3
    semantic_nclasses = 4
    lr = 2e-4
    lr_f_s = 2e-4
    beta1 = 0.5
    beta2 = 0.999
    train_f_s_B = False


class CUTSemanticMaskModel:
    def __init__(self, opt):
        self.opt = opt
        self.netG = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 3, 3, padding=1), nn.Tanh())
        self.netD = nn.Sequential(nn.Conv2d(3, 8, 4, stride=2, padding=1), nn.LeakyReLU(0.2), nn.Conv2d(8, 1, 3, padding=1))
        self.netf_s = define_f(opt.input_nc, nclasses=opt.semantic_nclasses)
        self.criterionGAN = nn.MSELoss()
        self.criterionf_s = nn.CrossEntropyLoss()
        self.optimizer_G = torch.optim.Adam(self.netG.parameters(), lr=opt.lr, betas=(opt.beta1, opt.beta2))
        self.optimizer_D = torch.optim.Adam(self.netD.parameters(), lr=opt.lr, betas=(opt.beta1, opt.beta2))
        self.optimizer_f_s = torch.optim.Adam(self.netf_s.parameters(), lr=opt.lr_f_s, betas=(opt.beta1, 0.999))

    def set_requires_grad(self, net, requires_grad):
        for p in net.parameters():
            p.requires_grad = requires_grad

    def set_input(self, real_A, real_B, label_A):
        self.real_A = real_A
        self.real_B = real_B
        self.input_A_label = label_A

    def forward(self):
        self.fake_B = self.netG(self.real_A)
        d = 1
        self.pred_real_A = self.netf_s(self.real_A)
        self.gt_pred_A = F.log_softmax(self.pred_real_A, dim=d).argmax(dim=d)
        self.pred_fake_B = self.netf_s(self.fake_B)
        self.pfB = F.log_softmax(self.pred_fake_B, dim=d)
        self.pfB_max = self.pfB.argmax(dim=d)

    def compute_D_loss(self):
        pred_fake = self.netD(self.fake_B.detach())
        pred_real = self.netD(self.real_B)
        loss_D_fake = self.criterionGAN(pred_fake, torch.zeros_like(pred_fake))
        loss_D_real = self.criterionGAN(pred_real, torch.ones_like(pred_real))
        return (loss_D_fake + loss_D_real) * 0.5

    def backward_f_s(self):
        label_A = self.input_A_label
        pred_A = self.netf_s(self.real_A)
        self.loss_f_s = self.criterionf_s(pred_A, label_A)
        self.loss_f_s.backward()

    def compute_G_loss(self):
        pred_fake = self.netD(self.fake_B)
        self.loss_G_GAN = self.criterionGAN(pred_fake, torch.ones_like(pred_fake))
        self.loss_sem = self.criterionf_s(self.pfB, self.input_A_label)
        return self.loss_G_GAN + self.loss_sem

    def optimize_parameters(self):
        self.forward()

        self.set_requires_grad(self.netD, True)
        self.optimizer_D.zero_grad()
        self.loss_D = self.compute_D_loss()
        self.loss_D.backward()
        self.optimizer_D.step()

        self.set_requires_grad(self.netf_s, True)
        self.backward_f_s()
        self.optimizer_f_s.step()  # <-- IPL001
        self.set_requires_grad(self.netf_s, False)

        self.set_requires_grad(self.netD, False)
        self.optimizer_G.zero_grad()
        self.loss_G = self.compute_G_loss()
        self.loss_G.backward()
        self.optimizer_G.step()


def main():
    model = CUTSemanticMaskModel(Opt())
    real_A = torch.randn(2, 3, 8, 8)
    real_B = torch.randn(2, 3, 8, 8)
    label_A = torch.randint(0, 4, (2, 8, 8))
    model.set_input(real_A, real_B, label_A)
    model.optimize_parameters()
    return model.loss_G.detach(), model.netG[0].weight.grad.clone()


loss_G, grad_G = main()
